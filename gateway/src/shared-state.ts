// Where gateway replicas share state (persisted queries, rate-limit counters, the response cache): Redis when
// REDIS_URL is set; otherwise this process's memory, a fallback for development only (refused in production by the
// config) and announced at start.
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';
import { createRedis, pingRedis, type Logger, type Redis } from '@ordergraph/common';

export interface SharedState {
  /** Undefined when the in-memory fallback is in use. */
  redis: Redis | undefined;
  close(): Promise<void>;
}

export function openSharedState(redisUrl: string | undefined, logger: Logger): SharedState {
  if (!redisUrl) {
    logger.warn(
      'REDIS_URL is not set: persisted queries, rate-limit counters and the response cache live in this process only ' +
        '(development only: replicas would not share them)',
    );
    return { redis: undefined, close: async () => {} };
  }
  const redis = createRedis(redisUrl, logger);
  return {
    redis,
    async close() {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}

/** /readyz answers 503 while Redis does not answer PING (Hive's own check covers the supergraph). */
export function useRedisReadiness(redis: Redis | undefined, endpoint: string, logger: Logger): GatewayPlugin {
  return {
    async onResponse({ request, response, setResponse }) {
      if (!redis || !response.ok || new URL(request.url).pathname !== endpoint) return;
      try {
        await pingRedis(redis);
      } catch (error) {
        logger.warn({ err: error }, 'not ready: redis does not answer');
        setResponse(new Response('redis unavailable', { status: 503, headers: { 'content-type': 'text/plain; charset=utf-8' } }));
      }
    },
  };
}
