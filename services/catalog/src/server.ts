// Builds the catalog subgraph; does not listen (index.ts does, tests call this in-process).
import { readFileSync } from 'node:fs';
import { createLogger, type Logger } from '@ordergraph/core';
import { createSubgraphService, openSubgraphResources, type SubgraphDeps, type SubgraphModule, type SubgraphService } from '@ordergraph/subgraph-kit';
import { catalogEnvSchema, loadCatalogConfig, type CatalogConfig } from './config.js';
import { contextFactory } from './context.js';
import { createProductDomain } from './domain/products.js';
import { resolvers } from './resolvers/index.js';
import { seedProducts } from './seed.js';
import { ProductStore } from './store/products.js';

export const typeDefs = readFileSync(new URL('./schema.graphql', import.meta.url), 'utf8');

export async function createCatalogService(
  config: CatalogConfig,
  logger: Logger = createLogger('catalog', config.LOG_LEVEL),
  deps: SubgraphDeps = {},
): Promise<SubgraphService> {
  const resources = await openSubgraphResources('catalog', config, logger, deps.database);
  const store = await ProductStore.open(resources.db);
  if (config.SEED) logger.info({ products: await seedProducts(store, config.SEED_SCALE) }, 'seeded');
  // Search words for products an earlier version stored; searches miss them only until this is done.
  void store.fillSearchWords().then(
    (filled) => filled > 0 && logger.info({ products: filled }, 'search words filled'),
    (error: unknown) => logger.error({ err: error }, 'filling search words failed; products stored by an earlier version are not found by search'),
  );
  const products = createProductDomain({ store });
  return createSubgraphService({ name: 'catalog', typeDefs, resolvers, resources, createContext: contextFactory(store, products), logger });
}

export const subgraph: SubgraphModule<CatalogConfig> = { envSchema: catalogEnvSchema, loadConfig: loadCatalogConfig, create: createCatalogService };
