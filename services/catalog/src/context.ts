import type { RequestIdentity, Viewer } from '@ordergraph/core';
import { createLoaders, type Loaders } from './loaders.js';
import type { ProductStore } from './store/products.js';

export interface Context {
  viewer: Viewer;
  store: ProductStore;
  loaders: Loaders;
}

export function contextFactory(store: ProductStore) {
  return ({ viewer }: RequestIdentity): Context => ({
    viewer,
    store,
    loaders: createLoaders(store),
  });
}
