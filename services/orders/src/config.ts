import { z } from 'zod';
import { loadConfig, redisEnvShape, redisSettingsProblem, subgraphEnvSchema } from '@ordergraph/core';

export const ordersEnvSchema = subgraphEnvSchema({ port: 4002, database: 'ordergraph_orders' }).extend({
  CATALOG_URL: z.url().default('http://127.0.0.1:4003/graphql').describe('The catalog subgraph, asked for current prices when orders are placed or their items change.'),
  ...redisEnvShape,
});

export type OrdersConfig = z.output<typeof ordersEnvSchema>;

const ordersConfigSchema = ordersEnvSchema.superRefine((config, context) => {
  const redis = redisSettingsProblem(config);
  if (redis) context.addIssue({ code: 'custom', path: [redis.path], message: redis.message });
});

export const loadOrdersConfig = (env: NodeJS.ProcessEnv = process.env): OrdersConfig => loadConfig(ordersConfigSchema, env);
