import { z } from 'zod';
import { loadConfig, subgraphEnvSchema } from '@ordergraph/common';

export const ordersEnvSchema = subgraphEnvSchema({ port: 4002, database: 'ordergraph_orders' }).extend({
  CATALOG_URL: z.url().default('http://127.0.0.1:4003/graphql').describe('The catalog subgraph, asked for current prices when orders are placed or their items change.'),
  REDIS_URL: z.string().regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL').optional().describe('Carries order events to the subscribers of every replica; unset: this process only (development).'),
});

export type OrdersConfig = z.output<typeof ordersEnvSchema>;

export const loadOrdersConfig = (env: NodeJS.ProcessEnv = process.env): OrdersConfig => loadConfig(ordersEnvSchema, env);
