import { toGlobalId } from '@ordergraph/core';
import { batches, seedOrders as seededOrders } from '@ordergraph/seed';
import { totalCentsOf, type OrderDoc, type OrderStore } from './store/orders.js';

/**
 * Seeds this subgraph's part of the shared deterministic data set at `scale` (SEED_SCALE), generated batch by batch;
 * returns how many orders were written. Orders of one user (or naming one product) share one ID string.
 */
export function seedOrders(store: OrderStore, scale = 1): Promise<number> {
  const globalIds = new Map<string, string>();
  const globalId = (type: 'User' | 'Product', localId: string): string => {
    let id = globalIds.get(localId);
    if (id === undefined) globalIds.set(localId, (id = toGlobalId(type, localId)));
    return id;
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
