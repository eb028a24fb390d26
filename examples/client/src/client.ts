// An Apollo Client for ordergraph: every operation goes out as a persisted-query hash (ids from the manifest the
// gateway's allow-list also loads) and follows the APQ protocol, queries and mutations over HTTP, subscriptions over
// graphql-ws, the bearer token on both.
import { ApolloClient, ApolloLink, HttpLink, InMemoryCache } from '@apollo/client';
import { CombinedGraphQLErrors } from '@apollo/client/errors';
import { PersistedQueryLink } from '@apollo/client/link/persisted-queries';
import { getMainDefinition, print } from '@apollo/client/utilities';
import { generatePersistedQueryIdsFromManifest, type PersistedQueryManifestForGeneratingPersistedQueryIds } from '@apollo/persisted-query-lists';
import { createClient, type Client } from 'graphql-ws';
import type { GraphQLFormattedError } from 'graphql';
import { Observable, type Subscription } from 'rxjs';

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

const hashUnknown = (result: ApolloLink.Result) =>
  result.data == null && (result.errors ?? []).some((error) => error.extensions?.['code'] === 'PERSISTED_QUERY_NOT_FOUND');

/**
 * Subscriptions over graphql-ws, speaking the APQ protocol as HttpLink does: the hash alone when the persisted-query
 * link asks for it (context `http.includeQuery: false`), and when the gateway answers PERSISTED_QUERY_NOT_FOUND, the
 * document with the hash. (Apollo's GraphQLWsLink always sends the document.) graphql-ws must send a `query`, so a hash
 * alone goes with an empty one, which is how the gateway takes it. The retry is made here rather than by the
 * persisted-query link, which would unsubscribe the refused operation while the gateway's `complete` for it is on its
 * way: graphql-ws then counts that operation out twice and closes the socket under the retry.
 */
export class PersistedGraphQLWsLink extends ApolloLink {
  constructor(private readonly ws: Client) {
    super();
  }

  override request(operation: ApolloLink.Operation): Observable<ApolloLink.Result> {
    const includeQuery = (operation.getContext() as { http?: { includeQuery?: boolean } }).http?.includeQuery !== false;
    if (includeQuery) return this.send(operation, true);
    return new Observable((observer) => {
      let retry: Subscription | undefined;
      // The refused operation ends on its own (the gateway sends `complete`); the retry runs beside it meanwhile.
      const first = this.send(operation, false).subscribe({
        next: (result) => {
          if (!retry && hashUnknown(result)) retry = this.send(operation, true).subscribe(observer);
          else observer.next(result);
        },
        error: (error: unknown) => (retry ? undefined : observer.error(error)),
        complete: () => (retry ? undefined : observer.complete()),
      });
      return () => {
        first.unsubscribe();
        retry?.unsubscribe();
      };
    });
  }

  private send({ query, variables, operationName, extensions }: ApolloLink.Operation, withQuery: boolean): Observable<ApolloLink.Result> {
    return new Observable((observer) =>
      this.ws.subscribe<ApolloLink.Result['data']>(
        { query: withQuery ? print(query) : '', variables, operationName, extensions },
        {
          next: (result) => observer.next(result as ApolloLink.Result),
          complete: () => observer.complete(),
          // graphql-ws reports a refused operation as its list of errors, a closed socket as a CloseEvent.
          error: (error: unknown) => {
            if (error instanceof Error) return observer.error(error);
            if (Array.isArray(error)) return observer.error(new CombinedGraphQLErrors({ errors: error as GraphQLFormattedError[] }));
            const close = error as { code?: number; reason?: string };
            observer.error(new Error(`the WebSocket closed${close.code === undefined ? '' : ` (${close.code}${close.reason ? ` ${close.reason}` : ''})`}`));
          },
        },
      ),
    );
  }
}

export function createOrdergraphClient({ url, token, manifest }: OrdergraphClientOptions): OrdergraphClient {
  const authorization = `Bearer ${token}`;
  const ws = createClient({ url: url.replace(/^http/, 'ws'), connectionParams: { Authorization: authorization } });
  const isSubscription = ({ query }: ApolloLink.Operation) => {
    const definition = getMainDefinition(query);
    return definition.kind === 'OperationDefinition' && definition.operation === 'subscription';
  };
  const link = ApolloLink.from([
    new PersistedQueryLink(generatePersistedQueryIdsFromManifest({ loadManifest: () => manifest })),
    ApolloLink.split(isSubscription, new PersistedGraphQLWsLink(ws), new HttpLink({ uri: url, headers: { authorization } })),
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
