// Builds the catalog subgraph; does not listen (index.ts does, tests call this in-process).
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
import type { CatalogConfig } from './config.js';
import { contextFactory } from './context.js';
import { resolvers } from './resolvers/index.js';
import { seedProducts } from './seed.js';
import { ProductStore } from './store/products.js';

// Also reachable as @ordergraph/catalog/config; re-exported because in-process callers (orders' tests) import it here.
export { loadCatalogConfig, type CatalogConfig } from './config.js';

export const typeDefs = readFileSync(new URL('./schema.graphql', import.meta.url), 'utf8');

export async function createCatalogService(
  config: CatalogConfig,
  logger: Logger = createLogger('catalog', config.LOG_LEVEL),
): Promise<SubgraphService> {
  const registry = createMetricsRegistry('catalog');
  const db = instrumentDatabase(
    await openDatabase({ mongoUrl: config.MONGO_URL, database: config.MONGO_DB }),
    datastoreOperationsCounter(registry),
  );
  logger.info({ backend: db.backend }, 'datastore opened');
  const store = await ProductStore.open(db);
  if (config.SEED) logger.info({ products: await seedProducts(store) }, 'seeded');
  return createSubgraphService({
    name: 'catalog',
    typeDefs,
    resolvers,
    verifyToken: createTokenVerifier(authSettings(config)),
    createContext: contextFactory(store),
    checkReady: () => db.ping(),
    close: () => db.close(),
    registry,
    logger,
    production: config.NODE_ENV === 'production',
  });
}
