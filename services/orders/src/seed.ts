import { toGlobalId } from '@ordergraph/core';
import { batches, seedCounts, seedOrders as seededOrders } from '@ordergraph/seed';
import { totalCentsOf, type OrderDoc, type OrderStore } from './store/orders.js';

/**
 * Seeds this subgraph's part of the shared deterministic data set at `scale` (SEED_SCALE), generated batch by batch;
 * returns how many orders were written. Orders of one user (or naming one product) share one ID string, made once
 * and found by the record's index (local ids end in it).
 */
export function seedOrders(store: OrderStore, scale = 1): Promise<number> {
  const counts = seedCounts(scale);
  // Array.from, not new Array(n): past 100,000 elements the latter is a dictionary, several times larger.
  const slots = (n: number) => Array.from<string | undefined>({ length: n });
  const made = { User: slots(counts.users), Product: slots(counts.products) };
  const globalId = (type: 'User' | 'Product', localId: string): string => {
    const index = Number(localId.slice(localId.lastIndexOf('-') + 1));
    return (made[type][index] ??= toGlobalId(type, localId));
  };
  const docs = (function* (): Generator<OrderDoc> {
    for (const order of seededOrders(scale)) {
      const items = order.items.map((item) => ({
        productId: globalId('Product', item.productLocalId),
        quantity: item.quantity,
        unitPriceCents: item.unitPriceCents,
      }));
      yield {
        _id: order.localId,
        userId: globalId('User', order.userLocalId),
        status: order.status,
        items,
        totalCents: totalCentsOf(items),
        version: 0,
        createdAt: order.createdAt,
        updatedAt: order.createdAt,
      };
    }
  })();
  return store.seed(batches(docs));
}
