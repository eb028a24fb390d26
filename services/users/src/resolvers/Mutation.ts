import { badUserInput, emailTaken, requireAdmin } from '@ordergraph/common';
import type { MutationResolvers } from '../generated/graphql.js';
import { EmailTakenError } from '../store/users.js';

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export const Mutation: MutationResolvers = {
  async createUser(_parent, { input }, { viewer, store }) {
    requireAdmin(viewer);
    if (!EMAIL.test(input.email.trim()) || input.email.length > 254) {
      throw badUserInput('email must be a valid address', { field: 'email' });
    }
    if (input.name.trim().length === 0 || input.name.length > 200) {
      throw badUserInput('name must be 1 to 200 characters', { field: 'name' });
    }
    try {
      return await store.create({ email: input.email, name: input.name, role: input.role ?? 'USER' });
    } catch (error) {
      if (error instanceof EmailTakenError) throw emailTaken(input.email.trim().toLowerCase());
      throw error;
    }
  },
};
