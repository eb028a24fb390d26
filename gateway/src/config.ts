import { z } from 'zod';
import { baseEnvSchema, loadConfig, redisEnvShape, redisSettingsProblem } from '@ordergraph/common';
import { INTROSPECTION_MODES, type IntrospectionMode } from './introspection.js';
import { QUERY_PLANNERS } from './query-planner.js';

const count = (fallback: number) => z.coerce.number().int().min(1).default(fallback);
const names = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((list) => list.split(',').map((name) => name.trim()).filter(Boolean));

export const gatewayEnvSchema = baseEnvSchema.extend({
  PORT: z.coerce.number().int().min(0).max(65535).default(4000),
  /** Subscriptions one WebSocket connection may have active at once. */
  MAX_SUBSCRIPTIONS_PER_CONNECTION: z.coerce.number().int().min(1).default(20),
  /** A WebSocket client that has not sent connection_init by then is closed (4408). */
  WS_CONNECTION_INIT_TIMEOUT_MS: z.coerce.number().int().min(1).default(3_000),
  /** WebSocket ping interval; a peer that misses a ping is dropped and its subscriptions released. */
  WS_KEEPALIVE_MS: z.coerce.number().int().min(1).default(12_000),
  /**
   * Events a subscriber may leave unread (its connection's buffers full) before it is disconnected: WebSocket with
   * 1008, SSE by cutting the stream. At most 1000: a Repeater queues no more than 1024 unread pushes.
   */
  SUBSCRIPTION_MAX_PENDING_EVENTS: z.coerce.number().int().min(1).max(1000).default(100),
  /** The composed supergraph to serve; `npm run compose` writes it from supergraph.yaml. */
  SUPERGRAPH_PATH: z.string().optional(),
  /** How often (ms) the gateway re-reads SUPERGRAPH_PATH to pick up a newly composed supergraph; 0 reads it once. */
  SUPERGRAPH_POLL_INTERVAL: z.coerce.number().int().min(0).default(10_000),
  /** How long (ms) requests admitted on a replaced supergraph may run on it before it is disposed. */
  SUPERGRAPH_DRAIN_TIMEOUT: z.coerce.number().int().positive().default(30_000),
  /** Per-subgraph routing URL overrides, for deployments where subgraphs do not run on localhost. */
  SUBGRAPH_USERS_URL: z.url().optional(),
  SUBGRAPH_ORDERS_URL: z.url().optional(),
  SUBGRAPH_CATALOG_URL: z.url().optional(),
  /** Who may introspect: everyone, administrators only, or no one. Unset: `admin` in production, else `public`. */
  INTROSPECTION: z.enum(INTROSPECTION_MODES).optional(),
  /**
   * rust: Hive's Rust query planner (@graphql-hive/router-runtime), the default; js: the JavaScript planner of
   * @graphql-tools/federation, kept for one release as a way back.
   */
  QUERY_PLANNER: z.enum(QUERY_PLANNERS).default('rust'),
  /** Shared state of every replica: persisted queries, rate-limit counters, the response cache. */
  ...redisEnvShape,

  // Operation limits, checked before any subgraph is called (limits.ts).
  MAX_DEPTH: count(7),
  MAX_COMPLEXITY: count(1000),
  MAX_ALIASES: count(30),
  MAX_TOKENS: count(5000),
  MAX_DIRECTIVES_PER_FIELD: count(10),

  // Rate limits per client and operation name (rate-limit.ts).
  RATE_LIMIT_WINDOW_MS: count(60_000).refine((ms) => ms % 1000 === 0, 'must be a whole number of seconds'),
  RATE_LIMIT_MAX: count(1000),
  RATE_LIMIT_EXPENSIVE_MAX: count(10),
  RATE_LIMIT_EXPENSIVE_OPERATIONS: names('GenerateReport,ExportAllUsers,BulkSearch'),
  /** Proxies in front of the gateway whose X-Forwarded-For entries are trusted to name the client's IP. */
  TRUST_PROXY_HOPS: z.coerce.number().int().min(0).default(0),

  /** apq: automatic persisted queries (any document, registered by hash); allowlist: only the manifest's. */
  PERSISTED_QUERIES: z.enum(['apq', 'allowlist']).default('apq'),
  /** Apollo's persisted-query manifest (JSON), required with PERSISTED_QUERIES=allowlist. */
  PERSISTED_QUERIES_MANIFEST: z.string().optional(),
});

const gatewayConfigSchema = gatewayEnvSchema.superRefine((config, context) => {
  if (config.PERSISTED_QUERIES === 'allowlist' && !config.PERSISTED_QUERIES_MANIFEST) {
    context.addIssue({ code: 'custom', path: ['PERSISTED_QUERIES_MANIFEST'], message: 'must be set when PERSISTED_QUERIES=allowlist' });
  }
  const redis = redisSettingsProblem(config);
  if (redis) context.addIssue({ code: 'custom', path: [redis.path], message: redis.message });
});

export type GatewayConfig = z.output<typeof gatewayEnvSchema>;

export const loadGatewayConfig = (env: NodeJS.ProcessEnv = process.env): GatewayConfig => loadConfig(gatewayConfigSchema, env);

export const introspectionMode = (config: GatewayConfig): IntrospectionMode =>
  config.INTROSPECTION ?? (config.NODE_ENV === 'production' ? 'admin' : 'public');

/** Routing URL overrides by subgraph name. */
export function subgraphUrlOverrides(config: GatewayConfig): Record<string, string> {
  const urls: Record<string, string | undefined> = {
    users: config.SUBGRAPH_USERS_URL,
    orders: config.SUBGRAPH_ORDERS_URL,
    catalog: config.SUBGRAPH_CATALOG_URL,
  };
  return Object.fromEntries(Object.entries(urls).filter((entry): entry is [string, string] => entry[1] !== undefined));
}
