import {
  badUserInput,
  decodeCursor,
  fromGlobalId,
  notFound,
  pageOffset,
  pageSize,
  requireAdmin,
  type Keyset,
} from '@ordergraph/core';
import type { QueryResolvers } from '../generated/graphql.js';
import { isReferencedType } from '../domain/search.js';
import { toConnection } from './UserConnection.js';
import { readUser } from './User.js';

function cursorArgument(value: string | null | undefined, argument: string): Keyset | undefined {
  if (value === null || value === undefined) return undefined;
  const position = decodeCursor(value);
  if (!position) throw badUserInput(`${argument} is not a valid cursor`, { argument });
  return position;
}

export const Query: QueryResolvers = {
  user: (_parent, { id }, ctx) => readUser(id, ctx),

  users(_parent, { filter, limit, offset }, { viewer, store }) {
    requireAdmin(viewer);
    return store.list(filter, { limit: pageSize(limit ?? 20, 'limit'), offset: pageOffset(offset ?? 0) });
  },

  async usersConnection(_parent, { filter, first, after, last, before }, { viewer, store }) {
    requireAdmin(viewer);
    if (first != null && last != null) throw badUserInput('Pass first or last, not both');
    const window =
      last != null
        ? { last: pageSize(last, 'last'), before: cursorArgument(before, 'before') }
        : { first: pageSize(first ?? 20, 'first'), after: cursorArgument(after, 'after') };
    return toConnection(await store.page(filter, window), () => store.count(filter));
  },

  async node(_parent, { id }, ctx) {
    const parsed = fromGlobalId(id);
    if (parsed?.type === 'User') return readUser(id, ctx);
    // Nodes owned elsewhere (the stubs in the schema): the owner resolves the reference first, with its own rules.
    if (parsed && isReferencedType(parsed.type)) return ctx.users.resolveNode({ __typename: parsed.type, id }, ctx.authorization);
    throw notFound('Node', id);
  },

  search: (_parent, { query }, { viewer, authorization, users }) => users.search(viewer, query, authorization),
};
