import { encodeCursor } from '@ordergraph/core';
import type { UserConnectionModel } from '../mappers.js';
import type { KeysetPage, UserDoc } from '../store/users.js';

const cursorOf = (doc: UserDoc) => encodeCursor({ createdAt: doc.createdAt, id: doc._id });

export function toConnection(page: KeysetPage, totalCount: () => Promise<number>): UserConnectionModel {
  const edges = page.docs.map((doc) => ({ node: doc, cursor: cursorOf(doc) }));
  return {
    edges,
    pageInfo: {
      hasNextPage: page.hasNextPage,
      hasPreviousPage: page.hasPreviousPage,
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges.at(-1)?.cursor ?? null,
    },
    totalCount,
  };
}
