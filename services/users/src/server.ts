// Builds the users subgraph; does not listen (index.ts does, tests call this in-process).
import { readFileSync } from 'node:fs';
import { createLogger, type Logger } from '@ordergraph/core';
import { createSubgraphService, openSubgraphResources, type SubgraphDeps, type SubgraphModule, type SubgraphService } from '@ordergraph/subgraph-kit';
import { usersEnvSchema, loadUsersConfig, type UsersConfig } from './config.js';
import { contextFactory } from './context.js';
import { createUserDomain } from './domain/users.js';
import { resolvers } from './resolvers/index.js';
import { createNodeOwners } from './peers/nodes.js';
import { createSearchFanOut } from './peers/search.js';
import { seedUsers } from './seed.js';
import { UserStore } from './store/users.js';

export const typeDefs = readFileSync(new URL('./schema.graphql', import.meta.url), 'utf8');

export async function createUsersService(
  config: UsersConfig,
  logger: Logger = createLogger('users', config.LOG_LEVEL),
  deps: SubgraphDeps = {},
): Promise<SubgraphService> {
  const resources = await openSubgraphResources('users', config, logger, deps.database);
  const store = await UserStore.open(resources.db);
  if (config.SEED) logger.info({ users: await seedUsers(store, config.SEED_SCALE) }, 'seeded');
  // Search words for users an earlier version stored; searches miss them only until this is done.
  void store.fillSearchWords().then(
    (filled) => filled > 0 && logger.info({ users: filled }, 'search words filled'),
    (error: unknown) => logger.error({ err: error }, 'filling search words failed; users stored by an earlier version are not found by search'),
  );
  const search = createSearchFanOut(
    [
      { name: 'orders', typename: 'Order', url: config.ORDERS_URL, field: '_searchOrders' },
      { name: 'catalog', typename: 'Product', url: config.CATALOG_URL, field: '_searchProducts' },
    ],
    logger,
    { signingSecret: resources.signingSecret },
  );
  const nodes = createNodeOwners({ Order: config.ORDERS_URL, Product: config.CATALOG_URL }, logger, { signingSecret: resources.signingSecret });
  const users = createUserDomain({ store, search, nodes });
  return createSubgraphService({ name: 'users', typeDefs, resolvers, resources, createContext: contextFactory(store, users), logger });
}

export const subgraph: SubgraphModule<UsersConfig> = { envSchema: usersEnvSchema, loadConfig: loadUsersConfig, create: createUsersService };
