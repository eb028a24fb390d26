import type { NodeResolvers, SearchResultResolvers } from '../generated/graphql.js';

/** Stored users carry `_id`; references to other subgraphs' nodes carry their `__typename`. */
const typeOf = (value: object): 'User' | 'Order' | 'Product' =>
  '_id' in value ? 'User' : ((value as { __typename: 'Order' | 'Product' }).__typename);

export const Node: NodeResolvers = { __resolveType: typeOf };
export const SearchResult: SearchResultResolvers = { __resolveType: typeOf };
