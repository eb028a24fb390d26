import type { RequestIdentity, Viewer } from '@ordergraph/core';
import type { OrderCommands } from './domain/orders.js';
import type { OrderEvents } from './events.js';
import { createLoaders, type Loaders } from './loaders.js';
import type { OrderStore } from './store/orders.js';

export interface Context {
  viewer: Viewer;
  /** Reads go through these, so a batch of N orders or users costs one store query. */
  loaders: Loaders;
  /** Writes go through these. */
  orders: OrderCommands;
  /** Subscriptions listen here. */
  events: OrderEvents;
}

export function contextFactory(store: OrderStore, orders: OrderCommands, events: OrderEvents) {
  return ({ viewer }: RequestIdentity): Context => ({ viewer, loaders: createLoaders(store), orders, events });
}
