import { z } from 'zod';
import { loadConfig, subgraphEnvSchema } from '@ordergraph/common';

export const usersEnvSchema = subgraphEnvSchema({ port: 4001, database: 'ordergraph_users' }).extend({
  /** Owners of the other searchable types; search(query) asks their internal search fields. */
  ORDERS_URL: z.url().default('http://127.0.0.1:4002/graphql'),
  CATALOG_URL: z.url().default('http://127.0.0.1:4003/graphql'),
});

export type UsersConfig = z.output<typeof usersEnvSchema>;

export const loadUsersConfig = (env: NodeJS.ProcessEnv = process.env): UsersConfig => loadConfig(usersEnvSchema, env);
