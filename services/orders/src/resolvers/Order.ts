import { centsToAmount, isSelfOrAdmin, localIdOf, notFound, requireSignedIn, toGlobalId } from '@ordergraph/core';
import type { Context } from '../context.js';
import type { OrderResolvers } from '../generated/graphql.js';
import type { OrderDoc } from '../store/orders.js';

/**
 * The one way to read an order by global ID: signed in, and the order's owner or an administrator. Another user's
 * order answers exactly as a missing one (NOT_FOUND), so nobody learns which IDs exist.
 */
export async function readOrder(id: string, ctx: Context): Promise<OrderDoc> {
  // Before the lookup, so anonymous callers learn nothing either.
  const viewer = requireSignedIn(ctx.viewer);
  const localId = localIdOf('Order', id);
  const order = localId === null ? null : await ctx.loaders.order.load(localId);
  if (!order || !isSelfOrAdmin(viewer, order.userId)) throw notFound('Order', id);
  return order;
}

export const Order: OrderResolvers = {
  __resolveReference: (reference, ctx) => readOrder(reference.id, ctx),
  id: (order) => toGlobalId('Order', order._id),
  status: (order) => order.status,
  items: (order) => order.items,
  total: (order) => centsToAmount(order.totalCents),
  user: (order) => ({ id: order.userId }),
  createdAt: (order) => order.createdAt,
  updatedAt: (order) => order.updatedAt,
};
