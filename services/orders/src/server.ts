// Builds the orders subgraph; does not listen (index.ts does, tests call this in-process).
import { readFileSync } from 'node:fs';
import {
  createLogger,
  createSubgraphService,
  openSubgraphResources,
  redisTarget,
  type DocumentDatabase,
  type Logger,
  type SubgraphService,
} from '@ordergraph/common';
import { createCatalogClient } from './peers/catalog.js';
import type { OrdersConfig } from './config.js';
import { contextFactory } from './context.js';
import { createOrderCommands } from './domain/orders.js';
import { inProcessOrderEvents, redisOrderEvents } from './events.js';
import { resolvers } from './resolvers/index.js';
import { seedOrders } from './seed.js';
import { OrderStore } from './store/orders.js';

export const typeDefs = readFileSync(new URL('./schema.graphql', import.meta.url), 'utf8');

/** The Redis channel of new-order events, for tests that publish events as another replica would. */
export { CREATED_CHANNEL } from './events.js';

export interface OrdersServiceDeps {
  /** A datastore to use instead of opening one: replicas in one test process share it, as they would MongoDB. */
  database?: DocumentDatabase;
}

export async function createOrdersService(
  config: OrdersConfig,
  logger: Logger = createLogger('orders', config.LOG_LEVEL),
  deps: OrdersServiceDeps = {},
): Promise<SubgraphService> {
  const resources = await openSubgraphResources('orders', config, logger, deps.database);
  const store = await OrderStore.open(resources.db);
  if (config.SEED) logger.info({ orders: await seedOrders(store) }, 'seeded');
  const redis = redisTarget(config);
  if (!redis) logger.warn('No Redis is configured (REDIS_URL, REDIS_SENTINELS or REDIS_CLUSTER_NODES): order events reach this process only (development only)');
  const events = redis ? redisOrderEvents(redis, logger, resources.registry) : inProcessOrderEvents();
  const orders = createOrderCommands(store, createCatalogClient(config.CATALOG_URL, logger), events);
  return createSubgraphService({
    name: 'orders',
    typeDefs,
    resolvers,
    resources,
    createContext: contextFactory(store, orders, events),
    checkReady: () => events.ping(),
    close: () => events.close(),
    logger,
    subscriptions: true,
  });
}
