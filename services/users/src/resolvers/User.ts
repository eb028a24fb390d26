import { fromGlobalId, isSelfOrAdmin, notFound, requireSelfOrAdmin, requireSignedIn, toGlobalId } from '@ordergraph/core';
import type { Context } from '../context.js';
import type { UserResolvers } from '../generated/graphql.js';
import type { UserDoc } from '../store/users.js';

/**
 * The one way to read a user by global ID: the viewer must be that user or an administrator. Another user answers
 * exactly as a missing one (NOT_FOUND), without a lookup, so nobody learns which IDs exist.
 */
export async function readUser(id: string, ctx: Context): Promise<UserDoc> {
  if (!isSelfOrAdmin(requireSignedIn(ctx.viewer), id)) throw notFound('User', id);
  const parsed = fromGlobalId(id);
  const doc = parsed?.type === 'User' ? await ctx.loaders.user.load(parsed.localId) : null;
  if (!doc) throw notFound('User', id);
  return doc;
}

export const User: UserResolvers = {
  __resolveReference: (reference, ctx) => readUser(reference.id, ctx),
  id: (user) => toGlobalId('User', user._id),
  email(user, _args, ctx) {
    requireSelfOrAdmin(ctx.viewer, toGlobalId('User', user._id));
    return user.email;
  },
  name: (user) => user.name,
  role: (user) => user.role,
  createdAt: (user) => user.createdAt,
};
