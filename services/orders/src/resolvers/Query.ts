import { isSelfOrAdmin, localIdOf, toGlobalId } from '@ordergraph/core';
import type { QueryResolvers } from '../generated/graphql.js';
import { readOrder } from './Order.js';

/** An order found by its exact ID is the best match there is. */
const EXACT_MATCH = 3;

export const Query: QueryResolvers = {
  order: (_parent, { id }, ctx) => readOrder(id, ctx),

  /** Orders are searched by ID only; callers who may not read the order (anonymous included) find nothing. */
  async _searchOrders(_parent, { query, limit }, { viewer, loaders }) {
    const localId = localIdOf('Order', query.trim());
    if (viewer === null || localId === null || limit < 1) return [];
    const order = await loaders.order.load(localId);
    if (!order || !isSelfOrAdmin(viewer, order.userId)) return [];
    return [{ id: toGlobalId('Order', order._id), score: EXACT_MATCH }];
  },
};
