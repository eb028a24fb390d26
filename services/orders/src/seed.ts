import { toGlobalId } from '@ordergraph/core';
import { seedData } from '@ordergraph/seed';
import { totalCentsOf, type OrderDoc, type OrderStore } from './store/orders.js';

/** Seeds this subgraph's part of the shared deterministic data set; returns how many orders were written. */
export function seedOrders(store: OrderStore): Promise<number> {
  const docs: OrderDoc[] = seedData().orders.map((order) => {
    const items = order.items.map((item) => ({
      productId: toGlobalId('Product', item.productLocalId),
      quantity: item.quantity,
      unitPriceCents: item.unitPriceCents,
    }));
    return {
      _id: order.localId,
      userId: toGlobalId('User', order.userLocalId),
      status: order.status,
      items,
      totalCents: totalCentsOf(items),
      version: 0,
      createdAt: order.createdAt,
      updatedAt: order.createdAt,
    };
  });
  return store.seed(docs);
}
