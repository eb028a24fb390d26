// What search returns across subgraphs: references to nodes others own, merged by score into one capped list.
import { SEARCH_LIMIT, compareHits, type SearchHit } from '@ordergraph/subgraph-kit';
import type { Reference } from '../mappers.js';

export const isReferencedType = (type: string): type is Reference['__typename'] => type === 'Order' || type === 'Product';

/** Merges scored hits of every type into the final, capped, totally ordered result. */
export function mergeHits<T extends string>(hits: (SearchHit & { typename: T })[]): { __typename: T; id: string }[] {
  return hits
    .filter((hit) => hit.score > 0)
    .sort(compareHits)
    .slice(0, SEARCH_LIMIT)
    .map((hit) => ({ __typename: hit.typename, id: hit.id }));
}
