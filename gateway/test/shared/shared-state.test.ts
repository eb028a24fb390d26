// The caches' reads of Redis: those asked for in one turn of the event loop leave as one MGET, each key once, and each
// reader gets its own keys' values; a failed command fails every read that shared it; a task run once for a turn's
// callers is never shared with a later turn's. Against a private redis-server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger, createRedis, type Redis } from '@ordergraph/core';
import { startRedis, type TestRedis } from '@ordergraph/testkit';
import { coalesced, oncePerTurn, readsOf } from '../../src/shared/shared-state.js';

describe('coalesced reads', () => {
  it('sends the reads asked for in one turn of the event loop as one, each key once, each reader its own', async () => {
    const sent: string[][] = [];
    let failing = false;
    const read = coalesced(async (keys) => {
      sent.push(keys);
      if (failing) throw new Error('Redis away');
      return keys.map((key) => (key === 'unset' ? null : key.toUpperCase()));
    });
    const together = await Promise.all([read(['epoch', 'a', 'b']), read(['epoch', 'b', 'unset']), read([])]);
    expect(together).toEqual([['EPOCH', 'A', 'B'], ['EPOCH', 'B', null], []]);
    expect(sent).toEqual([['epoch', 'a', 'b', 'unset']]);
    // A read asked for once the command left goes in the next one: it must see what was written meanwhile.
    const first = read(['a']);
    await new Promise((resolve) => setImmediate(resolve));
    const second = read(['a']);
    expect(await Promise.all([first, second])).toEqual([['A'], ['A']]);
    expect(sent.slice(1)).toEqual([['a'], ['a']]);
    // A failed command fails every read that shared it.
    failing = true;
    const failed = await Promise.allSettled([read(['a']), read(['b'])]);
    expect(failed.map((result) => result.status)).toEqual(['rejected', 'rejected']);
    // So does one that throws before it has a promise to give.
    const throwing = coalesced(() => {
      throw new Error('not connected');
    });
    await expect(throwing(['a'])).rejects.toThrow('not connected');
  });

  it("runs a task once for the callers of one turn, after it, and never for a later turn's callers", async () => {
    let runs = 0;
    let release: () => void = () => {};
    const task = oncePerTurn(async () => {
      const run = ++runs;
      await new Promise<void>((resolve) => (release = resolve));
      return run;
    });
    const together = [task(), task()];
    expect(runs).toBe(0);
    await new Promise((resolve) => setImmediate(resolve));
    expect(runs).toBe(1);
    // Called while the first run is under way: a run of its own, which may see what was written meanwhile.
    const later = task();
    release();
    expect(await Promise.all(together)).toEqual([1, 1]);
    await new Promise((resolve) => setImmediate(resolve));
    release();
    expect(await later).toBe(2);
    const failing = oncePerTurn(() => Promise.reject(new Error('Redis away')));
    await expect(Promise.all([failing(), failing()])).rejects.toThrow('Redis away');
  });

  it('reads a real Redis in one MGET for the reads of a turn, none for an empty read', async () => {
    await redis.mset('k:a', 'A', 'k:b', 'B');
    await redis.config('RESETSTAT');
    const read = readsOf(redis);
    const values = await Promise.all([read(['k:a', 'k:b']), read(['k:b', 'k:none']), read(['k:a']), read([])]);
    expect(values).toEqual([['A', 'B'], ['B', null], ['A'], []]);
    const stats = (await redis.info('commandstats')).split('\r\n').filter((line) => line.startsWith('cmdstat_mget:') || line.startsWith('cmdstat_get:'));
    expect(stats.map((line) => line.split(',')[0])).toEqual(['cmdstat_mget:calls=1']);
  });
});

let server: TestRedis;
let redis: Redis;
beforeAll(async () => {
  server = await startRedis();
  redis = createRedis(server.url, createLogger('shared-state-test', 'silent'));
});
afterAll(async () => {
  redis?.disconnect();
  await server?.close();
});
