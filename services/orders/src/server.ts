// Builds the orders subgraph; does not listen (index.ts does, tests call this in-process).
import { readFileSync } from 'node:fs';
import { createLogger, redisTarget, type Logger } from '@ordergraph/core';
import { createSubgraphService, openSubgraphResources, type SubgraphDeps, type SubgraphModule, type SubgraphService } from '@ordergraph/subgraph-kit';
import { createCatalogClient } from './peers/catalog.js';
import { ordersEnvSchema, loadOrdersConfig, type OrdersConfig } from './config.js';
import { contextFactory } from './context.js';
import { createOrderDomain } from './domain/orders.js';
import { inProcessOrderEvents, redisOrderEvents } from './events.js';
import { resolvers } from './resolvers/index.js';
import { seedOrders } from './seed.js';
import { OrderStore } from './store/orders.js';

export const typeDefs = readFileSync(new URL('./schema.graphql', import.meta.url), 'utf8');

/** The Redis channel of new-order events, for tests that publish events as another replica would. */
export { CREATED_CHANNEL } from './events.js';

export async function createOrdersService(
  config: OrdersConfig,
  logger: Logger = createLogger('orders', config.LOG_LEVEL),
  deps: SubgraphDeps = {},
): Promise<SubgraphService> {
  const resources = await openSubgraphResources('orders', config, logger, deps.database);
  const store = await OrderStore.open(resources.db);
  if (config.SEED) logger.info({ orders: await seedOrders(store, config.SEED_SCALE) }, 'seeded');
  const redis = redisTarget(config);
  if (!redis) logger.warn('No Redis is configured (REDIS_URL, REDIS_SENTINELS or REDIS_CLUSTER_NODES): order events reach this process only (development only)');
  const events = redis ? redisOrderEvents(redis, logger, resources.registry) : inProcessOrderEvents();
  const catalog = createCatalogClient(config.CATALOG_URL, logger, { signingSecret: resources.signingSecret });
  const orders = createOrderDomain({ store, catalog, events });
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

export const subgraph: SubgraphModule<OrdersConfig> = { envSchema: ordersEnvSchema, loadConfig: loadOrdersConfig, create: createOrdersService };
