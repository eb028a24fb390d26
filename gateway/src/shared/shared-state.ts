// Where gateway replicas share state (persisted queries, rate-limit counters, the response cache): Redis when
// configured, else this process's memory, for development only (announced at start, as an error in production).
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';
import type { Registry } from 'prom-client';
import { createRedis, pingRedis, type Logger, type Redis, type RedisTarget } from '@ordergraph/core';

export interface SharedState {
  /** Undefined when the in-memory fallback is in use. */
  redis: Redis | undefined;
  /** Resolves once Redis is connected, or after a few seconds (then the gateway starts degraded, see isConnected). */
  connected(): Promise<void>;
  close(): Promise<void>;
}

const CONNECT_WAIT_MS = 5_000;

/**
 * Whether commands can reach Redis now. While it is down, callers treat the cache and persisted queries as misses at
 * once and the rate limiter counts in memory, rather than every request waiting for Redis commands to time out.
 */
export const isConnected = (redis: Redis): boolean => redis.status === 'ready';

/**
 * Reads for the entity cache's generations: every read asked for in one turn of the event loop goes to Redis as one
 * MGET (readMany), each key once. Under load a lookup's cost was mostly a command of its own for a few keys, which the
 * lookups in flight beside it were reading too. A read still leaves after it was asked for, so it sees every write
 * answered before then. It leaves a turn later, though: the response cache's lookups (one key each, rarely the same)
 * read this way bought nothing measurable in the benchmark's (g), and read at once.
 */
export function readsOf(redis: Redis): (keys: readonly string[]) => Promise<(string | null)[]> {
  return coalesced((keys) => readMany(redis, keys));
}

/** The values of `keys` now, in one MGET (in a Cluster, whose keys of different slots share no command, one GET each). */
export const readMany = (redis: Redis, keys: string[]): Promise<(string | null)[]> =>
  keys.length === 0 ? Promise.resolve([]) : redis.isCluster ? Promise.all(keys.map((key) => redis.get(key))) : redis.mget(keys);

/**
 * `run` once for every call made in one turn of the event loop, started after that turn (so it sees every write
 * answered before any of its callers asked) and never shared with a later turn's callers.
 */
export function oncePerTurn<T>(run: () => Promise<T>): () => Promise<T> {
  let next: Promise<T> | undefined;
  return () =>
    (next ??= new Promise<T>((resolve, reject) => {
      // After this turn's I/O callbacks, so that every caller they started joins.
      setImmediate(() => {
        next = undefined;
        run().then(resolve, reject);
      });
    }));
}

/**
 * `getMany` with the reads asked for in one turn of the event loop sent as one (oncePerTurn), each key once. Not
 * DataLoader: its `loadMany` makes a promise per key, and a lookup of a fetch of 400 entities asks for 400 generations
 * at once.
 */
export function coalesced(getMany: (keys: string[]) => Promise<(string | null)[]>): (keys: readonly string[]) => Promise<(string | null)[]> {
  // The keys of the turn's reads, each once, and where each stands among them.
  let keys: string[] = [];
  let indexOf = new Map<string, number>();
  const send = oncePerTurn(async () => {
    const [sent, index] = [keys, indexOf];
    keys = [];
    indexOf = new Map();
    return { values: await getMany(sent), index };
  });
  return async (wanted) => {
    if (wanted.length === 0) return [];
    for (const key of wanted) {
      if (indexOf.has(key)) continue;
      indexOf.set(key, keys.length);
      keys.push(key);
    }
    const { values, index } = await send();
    return wanted.map((key) => values[index.get(key)!] ?? null);
  };
}

export function openSharedState(target: RedisTarget | undefined, logger: Logger, production: boolean, registry?: Registry): SharedState {
  if (!target) {
    logger[production ? 'error' : 'warn'](
      'No Redis is configured (REDIS_URL, REDIS_SENTINELS or REDIS_CLUSTER_NODES): persisted queries, rate-limit counters and the response cache live in this process only ' +
        '(development only: replicas would not share them)',
    );
    return { redis: undefined, connected: async () => {}, close: async () => {} };
  }
  const redis = createRedis(target, logger, {}, registry && { registry, connection: 'shared-state' });
  return {
    redis,
    async connected() {
      if (isConnected(redis)) return;
      let timer: NodeJS.Timeout | undefined;
      const connected = new Promise<boolean>((resolve) => redis.once('ready', () => resolve(true)));
      const waited = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), CONNECT_WAIT_MS)));
      if (!(await Promise.race([connected, waited]))) logger.warn('redis is not reachable yet; starting without it');
      clearTimeout(timer);
    },
    async close() {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}

/** /readyz answers 503 while Redis does not answer PING (Hive's own check covers the supergraph). */
export function useRedisReadiness(redis: Redis | undefined, endpoint: string, logger: Logger): GatewayPlugin {
  return {
    // Not async itself: every other response passes this hook too, and should not pay for a promise.
    onResponse({ request, response, setResponse }) {
      if (!redis || !response.ok || !request.url.includes(endpoint) || new URL(request.url).pathname !== endpoint) return undefined;
      return (async () => {
        try {
          if (!isConnected(redis)) throw new Error(`redis connection is ${redis.status}`);
          await pingRedis(redis);
        } catch (error) {
          logger.warn({ err: error }, 'not ready: redis does not answer');
          setResponse(new Response('redis unavailable', { status: 503, headers: { 'content-type': 'text/plain; charset=utf-8' } }));
        }
      })();
    },
  };
}
