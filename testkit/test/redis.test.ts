import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startRedis, type TestRedis } from '../src/redis.js';

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(() => redis.close());

it('starts a private Redis that answers, stops and comes back on the same port', async () => {
  expect(redis.port).not.toBe(6379);
  const client = new Redis(redis.url, { maxRetriesPerRequest: 1 });
  await client.set('k', 'v');
  expect(await client.get('k')).toBe('v');
  client.disconnect();
  await redis.stop();
  await redis.start();
  const again = new Redis(redis.url);
  expect(await again.ping()).toBe('PONG');
  again.disconnect();
});
