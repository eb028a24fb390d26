import { pageOffset, pageSize, requireSelfOrAdmin } from '@ordergraph/core';
import type { UserResolvers } from '../generated/graphql.js';

export const User: UserResolvers = {
  // The users subgraph owns users; this one only adds their orders, so the reference is all it needs.
  __resolveReference: (reference) => reference,
  async orders(user, { limit, offset }, { viewer, loaders }) {
    requireSelfOrAdmin(viewer, user.id);
    const page = { limit: pageSize(limit ?? 20, 'limit'), offset: pageOffset(offset ?? 0) };
    if (page.limit === 0) return [];
    return loaders.ordersOfUser.load({ userId: user.id, ...page });
  },
};
