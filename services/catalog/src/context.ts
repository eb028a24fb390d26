import type { RequestIdentity, Viewer } from '@ordergraph/core';
import type { ProductDomain } from './domain/products.js';
import { createLoaders, type Loaders } from './loaders.js';
import type { ProductStore } from './store/products.js';

export interface Context {
  viewer: Viewer;
  /** Reads of one entity by ID go through these, so a batch of N products costs one store query. */
  loaders: Loaders;
  /** Reads of lists. */
  store: ProductStore;
  /** Writes, and anything else with a rule. */
  products: ProductDomain;
}

export function contextFactory(store: ProductStore, products: ProductDomain) {
  return ({ viewer }: RequestIdentity): Context => ({ viewer, loaders: createLoaders(store), store, products });
}
