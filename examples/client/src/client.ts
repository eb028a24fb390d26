// An Apollo Client for ordergraph: queries and mutations over HTTP as persisted-query hashes (ids from the manifest the
// gateway's allow-list also loads), subscriptions over graphql-ws, the bearer token on both.
import { ApolloClient, ApolloLink, HttpLink, InMemoryCache } from '@apollo/client';
import { PersistedQueryLink } from '@apollo/client/link/persisted-queries';
import { GraphQLWsLink } from '@apollo/client/link/subscriptions';
import { getMainDefinition } from '@apollo/client/utilities';
import { generatePersistedQueryIdsFromManifest, type PersistedQueryManifestForGeneratingPersistedQueryIds } from '@apollo/persisted-query-lists';
import { createClient, type Client } from 'graphql-ws';

export interface OrdergraphClientOptions {
  /** The gateway's /graphql URL (http or https; the WebSocket URL is derived from it). */
  url: string;
  /** A bearer token (`npm run token -- --role USER` in development). */
  token: string;
  /** The persisted-query manifest `npm run manifest` builds from src/operations. */
  manifest: PersistedQueryManifestForGeneratingPersistedQueryIds;
}

export interface OrdergraphClient {
  apollo: ApolloClient;
  /** The WebSocket connection, for `on('connected')` and the like. */
  ws: Client;
  /** Closes the WebSocket and stops the client. */
  stop(): Promise<void>;
}

export function createOrdergraphClient({ url, token, manifest }: OrdergraphClientOptions): OrdergraphClient {
  const authorization = `Bearer ${token}`;
  const ws = createClient({ url: url.replace(/^http/, 'ws'), connectionParams: { Authorization: authorization } });
  // graphql-ws always sends a `query`; an empty one next to the hash is how the gateway's allow-list takes a hash alone.
  const hashOnly: Client = {
    ...ws,
    subscribe: (payload, sink) => ws.subscribe(payload.extensions?.['persistedQuery'] ? { ...payload, query: '' } : payload, sink),
  };
  const isSubscription = ({ query }: ApolloLink.Operation) => {
    const definition = getMainDefinition(query);
    return definition.kind === 'OperationDefinition' && definition.operation === 'subscription';
  };
  const link = ApolloLink.from([
    new PersistedQueryLink(generatePersistedQueryIdsFromManifest({ loadManifest: () => manifest })),
    ApolloLink.split(isSubscription, new GraphQLWsLink(hashOnly), new HttpLink({ uri: url, headers: { authorization } })),
  ]);
  const apollo = new ApolloClient({ link, cache: new InMemoryCache() });
  return {
    apollo,
    ws,
    async stop() {
      apollo.stop();
      await ws.dispose();
    },
  };
}
