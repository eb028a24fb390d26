// Builds the users subgraph; does not listen (index.ts does, tests call this in-process).
import { readFileSync } from 'node:fs';
import {
  authSettings,
  createLogger,
  createMetricsRegistry,
  createSubgraphService,
  createTokenVerifier,
  datastoreOperationsCounter,
  instrumentDatabase,
  openDatabase,
  type DocumentDatabase,
  type Logger,
  type SubgraphService,
} from '@ordergraph/common';
import type { UsersConfig } from './config.js';
import { contextFactory } from './context.js';
import { resolvers } from './resolvers/index.js';
import { createSearchFanOut } from './search.js';
import { seedUsers } from './seed.js';
import { UserStore } from './store/users.js';

export const typeDefs = readFileSync(new URL('./schema.graphql', import.meta.url), 'utf8');

export async function createUsersService(
  config: UsersConfig,
  logger: Logger = createLogger('users', config.LOG_LEVEL),
  /** The database to use instead of the one config names (tests inject failures with it). */
  database?: DocumentDatabase,
): Promise<SubgraphService> {
  const registry = createMetricsRegistry('users');
  const db = instrumentDatabase(
    database ?? (await openDatabase({ mongoUrl: config.MONGO_URL, database: config.MONGO_DB })),
    datastoreOperationsCounter(registry),
  );
  logger.info({ backend: db.backend }, 'datastore opened');
  const store = await UserStore.open(db);
  if (config.SEED) logger.info({ users: await seedUsers(store) }, 'seeded');
  const search = createSearchFanOut(
    [
      { typename: 'Order', url: config.ORDERS_URL, field: '_searchOrders' },
      { typename: 'Product', url: config.CATALOG_URL, field: '_searchProducts' },
    ],
    logger,
  );
  return createSubgraphService({
    name: 'users',
    typeDefs,
    resolvers,
    verifyToken: createTokenVerifier(authSettings(config)),
    createContext: contextFactory(store, search),
    checkReady: () => db.ping(),
    close: () => db.close(),
    registry,
    logger,
    production: config.NODE_ENV === 'production',
  });
}
