import type { RequestIdentity, Viewer } from '@ordergraph/core';
import type { OrderDomain } from './domain/orders.js';
import type { OrderEvents } from './events.js';
import { createLoaders, type Loaders } from './loaders.js';
import type { OrderStore } from './store/orders.js';

export interface Context {
  viewer: Viewer;
  /** Reads of one entity by ID go through these, so a batch of N orders or users costs one store query. */
  loaders: Loaders;
  /** Reads of lists. */
  store: OrderStore;
  /** Writes, and anything else with a rule. */
  orders: OrderDomain;
  /** Subscriptions listen here. */
  events: OrderEvents;
}

export function contextFactory(store: OrderStore, orders: OrderDomain, events: OrderEvents) {
  return ({ viewer }: RequestIdentity): Context => ({ viewer, loaders: createLoaders(store), store, orders, events });
}
