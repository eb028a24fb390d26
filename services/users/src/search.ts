// search(query) fans out to each owner's internal search field: every subgraph searches only its own data with its
// own index and rules, and this one merges the references. The owners then resolve the fields through federation.
import { GraphQLError } from 'graphql';
import { ErrorCode, SEARCH_LIMIT, compareHits, forwardedRequestHeaders, type Logger, type SearchHit } from '@ordergraph/common';

export interface RemoteSearch {
  /** The type the hits are of. */
  typename: Reference['__typename'];
  /** The owner's /graphql URL. */
  url: string;
  /** The owner's internal root field, taking (query: String!, limit: Int!) and returning [SearchHit!]!. */
  field: string;
}

/** A reference to a node another subgraph owns; its owner resolves the fields. */
export type Reference = { __typename: 'Order' | 'Product'; id: string };

export const isReferencedType = (type: string): type is Reference['__typename'] => type === 'Order' || type === 'Product';

export interface SearchFanOut {
  remote(query: string, authorization: string | undefined): Promise<(SearchHit & { typename: Reference['__typename'] })[]>;
}

export function createSearchFanOut(remotes: RemoteSearch[], logger: Logger, timeoutMs = 5_000): SearchFanOut {
  async function ask(remote: RemoteSearch, query: string, authorization: string | undefined) {
    const response = await fetch(remote.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...forwardedRequestHeaders(), ...(authorization ? { authorization } : {}) },
      body: JSON.stringify({
        query: `query Search($query: String!, $limit: Int!) { ${remote.field}(query: $query, limit: $limit) { id score } }`,
        variables: { query, limit: SEARCH_LIMIT },
      }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const body = (await response.json()) as { data?: Record<string, SearchHit[] | null> | null; errors?: unknown[] };
    const hits = body.data?.[remote.field];
    if (!hits) throw new Error(`${remote.field} failed: ${JSON.stringify(body.errors ?? response.status)}`);
    return hits.map((hit) => ({ ...hit, typename: remote.typename }));
  }

  return {
    async remote(query, authorization) {
      try {
        return (await Promise.all(remotes.map((remote) => ask(remote, query, authorization)))).flat();
      } catch (error) {
        logger.error({ err: error }, 'search fan-out failed');
        throw new GraphQLError('Search is temporarily unavailable', {
          extensions: { code: ErrorCode.SUBGRAPH_UNAVAILABLE },
        });
      }
    },
  };
}

/** Merges scored hits of every type into the final, capped, totally ordered result. */
export function mergeHits<T extends string>(hits: (SearchHit & { typename: T })[]): { __typename: T; id: string }[] {
  return hits
    .filter((hit) => hit.score > 0)
    .sort(compareHits)
    .slice(0, SEARCH_LIMIT)
    .map((hit) => ({ __typename: hit.typename, id: hit.id }));
}
