// search(query) fans out to each owner's internal search field: every subgraph searches only its own data with its
// own index and rules, and this one merges the references. The owners then resolve the fields through federation.
import { GraphQLError } from 'graphql';
import { ErrorCode, type Logger } from '@ordergraph/core';
import { SEARCH_LIMIT, createPeer, type PeerSettings, type SearchHit } from '@ordergraph/subgraph-kit';
import type { Reference } from '../mappers.js';

export interface RemoteSearch {
  /** The owner subgraph's name. */
  name: string;
  /** The type the hits are of. */
  typename: Reference['__typename'];
  /** The owner's /graphql URL. */
  url: string;
  /** The owner's internal root field, taking (query: String!, limit: Int!) and returning [SearchHit!]!. */
  field: string;
}

export interface SearchFanOut {
  remote(query: string, authorization: string | undefined): Promise<(SearchHit & { typename: Reference['__typename'] })[]>;
}

export function createSearchFanOut(remotes: RemoteSearch[], logger: Logger, settings: PeerSettings): SearchFanOut {
  const owners = remotes.map((remote) => ({
    ...remote,
    peer: createPeer({ name: remote.name, url: remote.url, logger, ...settings, unavailableMessage: 'Search is temporarily unavailable' }),
  }));

  async function ask(owner: (typeof owners)[number], query: string, authorization: string | undefined) {
    const operation = `query Search($query: String!, $limit: Int!) { ${owner.field}(query: $query, limit: $limit) { id score } }`;
    const body = await owner.peer.request<Record<string, SearchHit[] | null>>(operation, { query, limit: SEARCH_LIMIT }, authorization);
    const hits = body.data?.[owner.field];
    if (!hits) throw owner.peer.unavailable({ errors: body.errors, reason: `${owner.field} failed` });
    return hits.map((hit) => ({ ...hit, typename: owner.typename }));
  }

  return {
    async remote(query, authorization) {
      try {
        return (await Promise.all(owners.map((owner) => ask(owner, query, authorization)))).flat();
      } catch (error) {
        logger.error({ err: error }, 'search fan-out failed');
        throw new GraphQLError('Search is temporarily unavailable', {
          extensions: { code: ErrorCode.SUBGRAPH_UNAVAILABLE },
        });
      }
    },
  };
}
