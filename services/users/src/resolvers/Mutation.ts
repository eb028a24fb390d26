import { emailTaken, requireAdmin } from '@ordergraph/core';
import { validateNewUser } from '../domain/users.js';
import type { MutationResolvers } from '../generated/graphql.js';
import { EmailTakenError } from '../store/users.js';

export const Mutation: MutationResolvers = {
  async createUser(_parent, { input }, { viewer, store }) {
    requireAdmin(viewer);
    validateNewUser(input);
    try {
      return await store.create({ email: input.email, name: input.name, role: input.role ?? 'USER' });
    } catch (error) {
      if (error instanceof EmailTakenError) throw emailTaken(input.email.trim().toLowerCase());
      throw error;
    }
  },
};
