import { badUserInput, MAX_PAGE_SIZE, pageOffset, pageSize, toGlobalId } from '@ordergraph/core';
import type { QueryResolvers } from '../generated/graphql.js';
import { readProduct } from './Product.js';

export const Query: QueryResolvers = {
  product: (_parent, { id }, ctx) => readProduct(id, ctx),

  products: (_parent, { limit, offset }, { store }) =>
    store.list({ limit: pageSize(limit ?? 20, 'limit'), offset: pageOffset(offset ?? 0) }),

  /** Open to everyone, like the products it finds. The users subgraph's search asks it; limit is capped at 100. */
  async _searchProducts(_parent, { query, limit }, { store }) {
    if (limit < 0) throw badUserInput('limit must not be negative', { argument: 'limit' });
    const matches = await store.search(query, Math.min(limit, MAX_PAGE_SIZE));
    return matches.map(({ doc, score }) => ({ id: toGlobalId('Product', doc._id), score }));
  },
};
