import { z } from 'zod';
import { baseEnvSchema, loadConfig } from '@ordergraph/common';

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
  /** Per-subgraph routing URL overrides, for deployments where subgraphs do not run on localhost. */
  SUBGRAPH_USERS_URL: z.url().optional(),
  SUBGRAPH_ORDERS_URL: z.url().optional(),
  SUBGRAPH_CATALOG_URL: z.url().optional(),
});

export type GatewayConfig = z.output<typeof gatewayEnvSchema>;

export const loadGatewayConfig = (env: NodeJS.ProcessEnv = process.env): GatewayConfig => loadConfig(gatewayEnvSchema, env);

/** Routing URL overrides by subgraph name. */
export function subgraphUrlOverrides(config: GatewayConfig): Record<string, string> {
  const urls: Record<string, string | undefined> = {
    users: config.SUBGRAPH_USERS_URL,
    orders: config.SUBGRAPH_ORDERS_URL,
    catalog: config.SUBGRAPH_CATALOG_URL,
  };
  return Object.fromEntries(Object.entries(urls).filter((entry): entry is [string, string] => entry[1] !== undefined));
}
