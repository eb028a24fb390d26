import type { MutationResolvers } from '../generated/graphql.js';

export const Mutation: MutationResolvers = {
  createUser: (_parent, { input }, { viewer, users }) => users.create(viewer, input),
};
