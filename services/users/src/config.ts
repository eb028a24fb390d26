import { z } from 'zod';
import { loadConfig, subgraphEnvSchema } from '@ordergraph/core';

export const usersEnvSchema = subgraphEnvSchema({ port: 4001, database: 'ordergraph_users' }).extend({
  ORDERS_URL: z.url().default('http://127.0.0.1:4002/graphql').describe('The orders subgraph, asked by search(query) for orders (its internal search field) and by node(id) to resolve an order.'),
  CATALOG_URL: z.url().default('http://127.0.0.1:4003/graphql').describe('The catalog subgraph, asked by search(query) for products and by node(id) to resolve a product.'),
});

export type UsersConfig = z.output<typeof usersEnvSchema>;

export const loadUsersConfig = (env: NodeJS.ProcessEnv = process.env): UsersConfig => loadConfig(usersEnvSchema, env);
