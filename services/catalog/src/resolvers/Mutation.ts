import type { MutationResolvers } from '../generated/graphql.js';

export const Mutation: MutationResolvers = {
  createProduct: (_parent, { input }, { viewer, products }) => products.create(viewer, input),

  updateProduct: (_parent, { id, input }, { viewer, products }) => products.update(viewer, id, input),
};
