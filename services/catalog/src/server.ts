// Builds the catalog subgraph; does not listen (index.ts does, tests call this in-process).
import { readFileSync } from 'node:fs';
import {
  createLogger,
  createSubgraphService,
  openSubgraphResources,
  type Logger,
  type SubgraphService,
} from '@ordergraph/common';
import type { CatalogConfig } from './config.js';
import { contextFactory } from './context.js';
import { resolvers } from './resolvers/index.js';
import { seedProducts } from './seed.js';
import { ProductStore } from './store/products.js';

export const typeDefs = readFileSync(new URL('./schema.graphql', import.meta.url), 'utf8');

export async function createCatalogService(
  config: CatalogConfig,
  logger: Logger = createLogger('catalog', config.LOG_LEVEL),
): Promise<SubgraphService> {
  const resources = await openSubgraphResources('catalog', config, logger);
  const store = await ProductStore.open(resources.db);
  if (config.SEED) logger.info({ products: await seedProducts(store) }, 'seeded');
  return createSubgraphService({ name: 'catalog', typeDefs, resolvers, resources, createContext: contextFactory(store), logger });
}
