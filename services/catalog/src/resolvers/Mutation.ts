import { requireAdmin } from '@ordergraph/core';
import type { MutationResolvers } from '../generated/graphql.js';
import { newProductFields, updateProduct } from '../domain/products.js';

export const Mutation: MutationResolvers = {
  createProduct(_parent, { input }, { viewer, store }) {
    requireAdmin(viewer);
    return store.create(newProductFields(input));
  },

  updateProduct(_parent, { id, input }, { viewer, store }) {
    requireAdmin(viewer);
    return updateProduct(store, id, input);
  },
};
