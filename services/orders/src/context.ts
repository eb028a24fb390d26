import type { RequestIdentity, Viewer } from '@ordergraph/common';
import type { OrderCommands } from './domain/orders.js';
import { createLoaders, type Loaders } from './loaders.js';
import type { OrderStore } from './store/orders.js';

export interface Context {
  viewer: Viewer;
  /** Reads go through these, so a batch of N orders or users costs one store query. */
  loaders: Loaders;
  /** Writes go through these. */
  orders: OrderCommands;
}

export function contextFactory(store: OrderStore, orders: OrderCommands) {
  return ({ viewer }: RequestIdentity): Context => ({ viewer, loaders: createLoaders(store), orders });
}
