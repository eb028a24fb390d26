import DataLoader from 'dataloader';
import type { OrderDoc, OrderStore } from './store/orders.js';

/** A page of one user's orders, newest first. */
export interface OrdersOfUserKey {
  /** The user's global ID. */
  userId: string;
  limit: number;
  offset: number;
}

/** One DataLoader per entity, built per request. */
export function createLoaders(store: OrderStore) {
  return {
    /** Keys are local ids. */
    order: new DataLoader<string, OrderDoc | null>((ids) => store.findByIds(ids)),
    /** Every page asked for in a batch, whatever the users and windows, costs one store query. */
    ordersOfUser: new DataLoader<OrdersOfUserKey, OrderDoc[], string>(
      async (keys) => {
        // One user (the usual User.orders): only the window asked for, read from the index at any offset.
        const from = Math.min(...keys.map((key) => key.offset));
        const deepest = Math.max(...keys.map((key) => key.offset + key.limit));
        const orders = await store.findByUserIds(keys.map((key) => key.userId), deepest - from, from);
        return keys.map((key, i) => orders[i]!.slice(key.offset - from, key.offset - from + key.limit));
      },
      { cacheKeyFn: (key) => `${key.userId}|${key.offset}|${key.limit}` },
    ),
  };
}

export type Loaders = ReturnType<typeof createLoaders>;
