// Subscriptions of a subgraph: graphql-ws on its own HTTP server at /graphql, next to Apollo Server, which has no
// WebSocket transport; the gateway connects with the caller's token in connection_init, verified here as for HTTP.
import type http from 'node:http';
import type { GraphQLFormattedError, GraphQLSchema } from 'graphql';
import { useServer } from 'graphql-ws/use/ws';
import type { Registry } from 'prom-client';
import { WebSocketServer } from 'ws';
import { subscriptionMetrics, trackSubscription, websocketAuthentication, type RequestIdentity, type TokenVerifier } from '@ordergraph/core';
import { isSignedWith, unsignedRequest } from './signature.js';

export interface SubgraphSubscriptionsOptions<TContext> {
  httpServer: http.Server;
  path: string;
  schema: GraphQLSchema;
  verifyToken: TokenVerifier;
  createContext(identity: RequestIdentity): TContext | Promise<TContext>;
  /** The subgraph's error masker, so a WebSocket client sees exactly what an HTTP client would. */
  formatError(formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError;
  registry: Registry;
  /** Set: a subscription is started only when the gateway signed it (signature.ts), as on HTTP. */
  signingSecret: string | undefined;
}

export interface Disposable {
  /** Closes every connection with 1001 (Going away) and stops accepting new ones. */
  dispose(): Promise<void>;
}

const isAsyncIterable = (value: unknown): value is AsyncIterable<unknown> =>
  typeof value === 'object' && value !== null && Symbol.asyncIterator in value;

export function serveSubgraphSubscriptions<TContext>(options: SubgraphSubscriptionsOptions<TContext>): Disposable {
  const { formatError } = options;
  const gauge = subscriptionMetrics(options.registry);
  const authentication = websocketAuthentication(options.verifyToken);
  const wsServer = new WebSocketServer({ server: options.httpServer, path: options.path });
  const server = useServer(
    {
      schema: options.schema,
      onConnect: authentication.onConnect,
      onSubscribe: (_ctx, _id, payload) => (options.signingSecret && !isSignedWith(options.signingSecret, payload) ? [unsignedRequest()] : undefined),
      context: (ctx) => options.createContext(authentication.identityOf(ctx)),
      onOperation: (_ctx, _id, _payload, _args, result) =>
        isAsyncIterable(result) ? trackSubscription(result, gauge) : undefined,
      onNext: (_ctx, _id, _payload, _args, result) =>
        result.errors ? { ...result, errors: result.errors.map((error) => formatError(error.toJSON(), error)) } : undefined,
      onError: (_ctx, _id, _payload, errors) => errors.map((error) => formatError(error.toJSON(), error)),
    },
    wsServer,
  );
  return { dispose: async () => server.dispose() };
}
