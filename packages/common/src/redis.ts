// Redis connections for state that replicas share (persisted queries, rate-limit counters, response cache) and for
// events. One factory, so every process connects, retries and reports the same way.
import { Redis, type RedisOptions } from 'ioredis';
import type { Logger } from './logger.js';

export type { Redis };

/**
 * Connects to REDIS_URL. Commands issued while Redis is down wait in the offline queue for up to
 * `commandTimeoutMs` and then fail, so a request never hangs on an outage; the client reconnects forever with
 * capped backoff.
 */
export function createRedis(url: string, logger: Logger, options: RedisOptions = {}): Redis {
  const redis = new Redis(url, {
    lazyConnect: false,
    maxRetriesPerRequest: 2,
    commandTimeout: 2_000,
    retryStrategy: (attempt) => Math.min(attempt * 100, 2_000),
    ...options,
  });
  let healthy = true;
  redis.on('error', (error: Error) => {
    if (healthy) logger.warn({ err: error }, 'redis connection error');
    healthy = false;
  });
  redis.on('ready', () => {
    if (!healthy) logger.info('redis connection restored');
    healthy = true;
  });
  return redis;
}

/** Readiness probe: throws unless Redis answers PING. */
export async function pingRedis(redis: Redis): Promise<void> {
  const answer = await redis.ping();
  if (answer !== 'PONG') throw new Error(`unexpected PING answer: ${answer}`);
}
