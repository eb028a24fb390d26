import {
  badUserInput,
  decodeCursor,
  fromGlobalId,
  isAdmin,
  notFound,
  pageOffset,
  pageSize,
  requireAdmin,
  toGlobalId,
  type Keyset,
} from '@ordergraph/core';
import { SEARCH_LIMIT } from '@ordergraph/subgraph-kit';
import type { QueryResolvers } from '../generated/graphql.js';
import { isReferencedType, mergeHits } from '../domain/search.js';
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
    if (parsed && isReferencedType(parsed.type)) return ctx.nodes.resolve({ __typename: parsed.type, id }, ctx.authorization);
    throw notFound('Node', id);
  },

  /** Open to everyone: each owner applies its own rules (users for administrators only, orders for their owner). */
  async search(_parent, { query }, ctx) {
    const [own, remote] = await Promise.all([
      isAdmin(ctx.viewer) ? ctx.store.search(query, SEARCH_LIMIT) : Promise.resolve([]),
      ctx.search.remote(query, ctx.authorization),
    ]);
    const users = new Map(own.map(({ doc }) => [toGlobalId('User', doc._id), doc]));
    const ownHits = [...users.keys()].map((id, i) => ({ id, score: own[i]!.score, typename: 'User' as const }));
    const hits = mergeHits<'User' | 'Order' | 'Product'>([...ownHits, ...remote]);
    // Users are already loaded; references of other types are resolved by their owners through federation.
    return hits.map((hit) => (hit.__typename === 'User' ? users.get(hit.id)! : { __typename: hit.__typename, id: hit.id }));
  },
};
