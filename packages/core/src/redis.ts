// Redis connections for shared state and events: one factory, so every process connects, retries and reports the same
// way, to one node, a Sentinel-watched primary or a Cluster.
import { Cluster, Redis as RedisNode, type ClusterOptions, type RedisOptions } from 'ioredis';
import { Counter, Gauge, type Registry } from 'prom-client';
import { z } from 'zod';
import type { Logger } from './logger.js';

/** A connection to one node (or a Sentinel-watched primary) or to a Cluster: the commands we use are common to both. */
export type Redis = RedisNode | Cluster;

const hostList = z
  .string()
  .regex(/^[^\s:,]+:\d+(,[^\s:,]+:\d+)*$/, 'must be host:port[,host:port...]')
  .optional();

/** Where Redis is: the settings of every process that uses it. At most one of URL, Sentinel and Cluster is set. */
export const redisEnvShape = {
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL')
    .optional()
    .describe('One Redis node. Gateway: the state replicas share (persisted queries, rate-limit counters, the response cache); orders: order events for the subscribers of every replica. Unset (and no Sentinel or Cluster): this process only, for development.'),
  REDIS_SENTINELS: hostList.describe('Redis Sentinel: the sentinels (host:port,...) to ask where the primary named REDIS_SENTINEL_MASTER is.'),
  REDIS_SENTINEL_MASTER: z.string().optional().describe('The primary\'s name at the sentinels; required with REDIS_SENTINELS.'),
  REDIS_CLUSTER_NODES: hostList.describe('Redis Cluster: some of its nodes (host:port,...); the others are discovered.'),
  REDIS_PASSWORD: z.string().optional().describe('Password of the Redis nodes with Sentinel or Cluster (a URL carries its own).'),
  REDIS_TLS: z
    .enum(['true', 'false'])
    .optional()
    .transform((value) => value === 'true')
    .describe('TLS to the Redis nodes with Sentinel or Cluster (a URL says rediss://).'),
};

type RedisEnv = z.output<z.ZodObject<typeof redisEnvShape>>;

export type RedisTarget =
  | { mode: 'node'; url: string }
  | { mode: 'sentinel'; sentinels: HostPort[]; master: string; password?: string | undefined; tls: boolean }
  | { mode: 'cluster'; nodes: HostPort[]; password?: string | undefined; tls: boolean };

interface HostPort {
  host: string;
  port: number;
}

const hosts = (list: string) =>
  list.split(',').map((entry) => {
    const at = entry.lastIndexOf(':');
    return { host: entry.slice(0, at), port: Number(entry.slice(at + 1)) };
  });

/** The problem with a configuration's Redis settings, if any (for the config schemas' superRefine). */
export function redisSettingsProblem(env: RedisEnv): { path: string; message: string } | undefined {
  const set = (['REDIS_URL', 'REDIS_SENTINELS', 'REDIS_CLUSTER_NODES'] as const).filter((name) => env[name]);
  if (set.length > 1) return { path: set[1]!, message: `set only one of ${set.join(', ')}` };
  if (env.REDIS_SENTINELS && !env.REDIS_SENTINEL_MASTER) return { path: 'REDIS_SENTINEL_MASTER', message: 'must be set with REDIS_SENTINELS' };
  return undefined;
}

/** Where the configuration says Redis is; undefined when it names none. */
export function redisTarget(env: RedisEnv): RedisTarget | undefined {
  const shared = { password: env.REDIS_PASSWORD, tls: env.REDIS_TLS };
  if (env.REDIS_URL) return { mode: 'node', url: env.REDIS_URL };
  if (env.REDIS_SENTINELS) return { mode: 'sentinel', sentinels: hosts(env.REDIS_SENTINELS), master: env.REDIS_SENTINEL_MASTER!, ...shared };
  if (env.REDIS_CLUSTER_NODES) return { mode: 'cluster', nodes: hosts(env.REDIS_CLUSTER_NODES), ...shared };
  return undefined;
}

/** Options of a connection: commands, retries and timeouts (the same on every node of a Cluster). */
export type ConnectionOptions = Pick<RedisOptions, 'enableOfflineQueue' | 'maxRetriesPerRequest' | 'commandTimeout'>;

/**
 * Connects to `target` (a URL is one node). Commands issued while Redis is down wait in the offline queue for up to
 * `commandTimeout` and then fail, so a request never hangs on an outage; the client reconnects forever with capped
 * backoff. After a Sentinel failover the client follows the new primary (and reconnects when a demoted one answers
 * READONLY); a Cluster client follows slot moves.
 */
export function createRedis(target: RedisTarget | string, logger: Logger, options: ConnectionOptions = {}, metrics?: RedisMetrics): Redis {
  const resolved: RedisTarget = typeof target === 'string' ? { mode: 'node', url: target } : target;
  const connection: RedisOptions = {
    lazyConnect: false,
    maxRetriesPerRequest: 2,
    commandTimeout: 2_000,
    retryStrategy: (attempt) => Math.min(attempt * 100, 2_000),
    reconnectOnError: (error) => error.message.startsWith('READONLY'),
    // Commands issued in one tick of the event loop leave in one write: without it every command was a write(2) of its
    // own, 7.7 % of the gateway's busy CPU under the benchmark's mixed workload with the entity cache on.
    enableAutoPipelining: true,
    ...options,
  };
  const secured = (tls: boolean, password: string | undefined): RedisOptions => ({
    ...(password ? { password } : {}),
    ...(tls ? { tls: {} } : {}),
  });
  let redis: Redis;
  if (resolved.mode === 'node') {
    redis = new RedisNode(resolved.url, connection);
  } else if (resolved.mode === 'sentinel') {
    redis = new RedisNode({
      ...connection,
      ...secured(resolved.tls, resolved.password),
      sentinels: resolved.sentinels,
      name: resolved.master,
      // No failoverDetector: its +switch-master can arrive while the client is already reconnecting after the killed
      // primary closed its connection; that disconnect makes the connector's connect fail, and ioredis then ends the
      // client for good (status `end`: a gateway stuck unready after a failover, seen in 3 of 9 full test runs). A
      // primary that dies closes its connections, and a demoted one answers READONLY: both reconnect through the
      // sentinels. One that hangs without closing is left by the watchdog below.
      sentinelRetryStrategy: (attempt) => Math.min(attempt * 100, 2_000),
      ...(resolved.tls ? { enableTLSForSentinelMode: true, sentinelTLS: {} } : {}),
    });
  } else {
    const clusterOptions: ClusterOptions = {
      redisOptions: { ...connection, ...secured(resolved.tls, resolved.password) },
      enableOfflineQueue: connection.enableOfflineQueue ?? true,
      enableAutoPipelining: true,
      clusterRetryStrategy: (attempt) => Math.min(attempt * 100, 2_000),
      ...(connection.maxRetriesPerRequest === null ? {} : { maxRedirections: 16 }),
    };
    redis = new Cluster(resolved.nodes, clusterOptions);
  }
  let healthy = true;
  redis.on('error', (error: Error) => {
    if (healthy) logger.warn({ err: error }, 'redis connection error');
    healthy = false;
  });
  redis.on('ready', () => {
    if (!healthy) logger.info('redis connection restored');
    healthy = true;
  });
  if (metrics) instrument(redis, metrics);
  if (redis instanceof RedisNode) watchdog(redis, logger);
  return redis;
}

/** How often a ready connection is asked PING, how long it has to answer, and how many misses in a row drop it. */
const WATCHDOG = { intervalMs: 5_000, timeoutMs: 2_000, misses: 2 };

/**
 * A node that hangs without closing its connections (stopped, or cut off by the network) answers nothing and closes
 * nothing: ioredis keeps the connection, every command times out, and after a Sentinel failover the client never asks
 * the sentinels for the new primary. A PING every few seconds notices: after `misses` unanswered in a row the
 * connection is dropped and made again, through the sentinels where there are some. (A Cluster client watches its
 * nodes itself.) Its own timer, not `commandTimeout`: a subscriber connection has none.
 */
function watchdog(redis: RedisNode, logger: Logger): void {
  let misses = 0;
  const timer = setInterval(() => {
    if (redis.status !== 'ready') {
      misses = 0;
      return;
    }
    let expiry: NodeJS.Timeout | undefined;
    const unanswered = new Promise<boolean>((resolve) => (expiry = setTimeout(() => resolve(true), WATCHDOG.timeoutMs)));
    void Promise.race([redis.ping().then(() => false, () => true), unanswered]).then((missed) => {
      clearTimeout(expiry);
      misses = missed ? misses + 1 : 0;
      if (misses < WATCHDOG.misses || redis.status !== 'ready') return;
      misses = 0;
      logger.warn({ misses: WATCHDOG.misses }, 'redis connection unresponsive: reconnecting');
      redis.disconnect(true);
    });
  }, WATCHDOG.intervalMs);
  timer.unref();
  redis.once('end', () => clearInterval(timer));
}

/** Where a connection reports its state and its failed commands, under its name (`connection` label). */
export interface RedisMetrics {
  registry: Registry;
  connection: string;
}

const singleMetric = <T>(registry: Registry, name: string, create: () => T): T => (registry.getSingleMetric(name) as T | undefined) ?? create();

function instrument(redis: Redis, { registry, connection }: RedisMetrics): void {
  const up = singleMetric(
    registry,
    'redis_connection_up',
    () => new Gauge({ name: 'redis_connection_up', help: 'Whether a Redis connection is ready (1) or not (0)', labelNames: ['connection'], registers: [registry] }),
  );
  const failed = singleMetric(
    registry,
    'redis_command_errors_total',
    () =>
      new Counter({
        name: 'redis_command_errors_total',
        help: 'Redis commands that failed (timed out, refused while disconnected, or answered with an error)',
        labelNames: ['connection'],
        registers: [registry],
      }),
  );
  up.set({ connection }, 0);
  failed.inc({ connection }, 0);
  redis.on('ready', () => up.set({ connection }, 1));
  for (const event of ['close', 'end', 'error']) redis.on(event, () => up.set({ connection }, 0));
  // ioredis has no hook per command: every command passes through sendCommand, whose promise tells how it ended.
  const send = redis.sendCommand.bind(redis) as (command: { promise: Promise<unknown> }, ...rest: unknown[]) => unknown;
  (redis as unknown as { sendCommand: typeof send }).sendCommand = (command, ...rest) => {
    command.promise.catch(() => failed.inc({ connection }));
    return send(command, ...rest);
  };
}

/** Readiness probe: throws unless Redis answers PING. */
export async function pingRedis(redis: Redis): Promise<void> {
  const answer = await redis.ping();
  if (answer !== 'PONG') throw new Error(`unexpected PING answer: ${answer}`);
}
