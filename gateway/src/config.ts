import { z } from 'zod';
import { baseEnvSchema, loadConfig } from '@ordergraph/common';
import { INTROSPECTION_MODES, type IntrospectionMode } from './introspection.js';

export const gatewayEnvSchema = baseEnvSchema.extend({
  PORT: z.coerce.number().int().min(0).max(65535).default(4000),
  /** Subscriptions one WebSocket connection may have active at once. */
  MAX_SUBSCRIPTIONS_PER_CONNECTION: z.coerce.number().int().min(1).default(20),
  /** A WebSocket client that has not sent connection_init by then is closed (4408). */
  WS_CONNECTION_INIT_TIMEOUT_MS: z.coerce.number().int().min(1).default(3_000),
  /** WebSocket ping interval; a peer that misses a ping is dropped and its subscriptions released. */
  WS_KEEPALIVE_MS: z.coerce.number().int().min(1).default(12_000),
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
});

export type GatewayConfig = z.output<typeof gatewayEnvSchema>;

export const loadGatewayConfig = (env: NodeJS.ProcessEnv = process.env): GatewayConfig => loadConfig(gatewayEnvSchema, env);

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
