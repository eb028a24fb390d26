// Builds the orders subgraph; does not listen (index.ts does, tests call this in-process).
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
  type Logger,
  type SubgraphService,
} from '@ordergraph/common';
import { createCatalogClient } from './catalog.js';
import type { OrdersConfig } from './config.js';
import { contextFactory } from './context.js';
import { createOrderCommands } from './domain/orders.js';
import { resolvers } from './resolvers/index.js';
import { seedOrders } from './seed.js';
import { OrderStore } from './store/orders.js';

export const typeDefs = readFileSync(new URL('./schema.graphql', import.meta.url), 'utf8');

export async function createOrdersService(config: OrdersConfig, logger: Logger = createLogger('orders', config.LOG_LEVEL)): Promise<SubgraphService> {
  const registry = createMetricsRegistry('orders');
  const db = instrumentDatabase(
    await openDatabase({ mongoUrl: config.MONGO_URL, database: config.MONGO_DB }),
    datastoreOperationsCounter(registry),
  );
  logger.info({ backend: db.backend }, 'datastore opened');
  const store = await OrderStore.open(db);
  if (config.SEED) logger.info({ orders: await seedOrders(store) }, 'seeded');
  const orders = createOrderCommands(store, createCatalogClient(config.CATALOG_URL, logger));
  return createSubgraphService({
    name: 'orders',
    typeDefs,
    resolvers,
    verifyToken: createTokenVerifier(authSettings(config)),
    createContext: contextFactory(store, orders),
    checkReady: () => db.ping(),
    close: () => db.close(),
    registry,
    logger,
    production: config.NODE_ENV === 'production',
  });
}
