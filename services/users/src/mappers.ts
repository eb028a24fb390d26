// The shapes resolvers receive for the GraphQL types that have no document of their own (codegen's mappers).
import type { UserDoc } from './store/users.js';

/** A node another subgraph owns (Order, Product): this subgraph knows only its type and key, the owner resolves the rest. */
export type Reference = { __typename: 'Order' | 'Product'; id: string };

export interface UserConnectionModel {
  edges: { node: UserDoc; cursor: string }[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
  /** A function, so graphql-js calls it, and the count query runs, only when the field is selected. */
  totalCount: () => Promise<number>;
}
