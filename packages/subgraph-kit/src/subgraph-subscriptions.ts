// Subscriptions of a subgraph: graphql-ws on its own HTTP server at /graphql, next to Apollo Server, which has no
// WebSocket transport; each subscription's caller is verified as an HTTP request's is.
import type http from 'node:http';
import { GraphQLError, type GraphQLFormattedError, type GraphQLSchema } from 'graphql';
import { useServer } from 'graphql-ws/use/ws';
import { Gauge, type Registry } from 'prom-client';
import { WebSocketServer } from 'ws';
import {
  ErrorCode,
  InvalidTokenError,
  SUBSCRIBER_EXTENSION,
  subscriptionMetrics,
  trackSubscription,
  viewerFromHeader,
  websocketAuthentication,
  type RequestIdentity,
  type TokenVerifier,
} from '@ordergraph/core';
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

const subscriberOf = (extensions: unknown): string | undefined => {
  const value = (extensions as Record<string, unknown> | undefined)?.[SUBSCRIBER_EXTENSION];
  return typeof value === 'string' ? value : undefined;
};

const isAsyncIterable = (value: unknown): value is AsyncIterable<unknown> =>
  typeof value === 'object' && value !== null && Symbol.asyncIterator in value;

export function serveSubgraphSubscriptions<TContext>(options: SubgraphSubscriptionsOptions<TContext>): Disposable {
  const { formatError } = options;
  const gauge = subscriptionMetrics(options.registry);
  const authentication = websocketAuthentication(options.verifyToken);
  // Each subscription's verified caller, from onSubscribe to its context: the gateway's connections carry many callers'
  // subscriptions, each naming its own (SUBSCRIBER_EXTENSION); a client that sent a token in connection_init only is
  // that connection's caller.
  const callers = new WeakMap<object, Map<string, RequestIdentity>>();
  const callerOf = (ctx: object, id: string) => callers.get(ctx)?.get(id);
  const wsServer = new WebSocketServer({ server: options.httpServer, path: options.path });
  const connections = new Gauge({
    name: 'graphql_websocket_connections',
    help: 'Open WebSocket connections; a gateway replica keeps one for all its subscriptions here',
    registers: [options.registry],
  });
  wsServer.on('connection', (socket) => {
    connections.inc();
    socket.once('close', () => connections.dec());
  });
  const server = useServer(
    {
      schema: options.schema,
      onConnect: authentication.onConnect,
      async onSubscribe(ctx, id, payload) {
        if (options.signingSecret && !isSignedWith(options.signingSecret, payload)) return [unsignedRequest()];
        const authorization = subscriberOf(payload.extensions);
        if (authorization === undefined) return undefined;
        try {
          const viewer = await viewerFromHeader(options.verifyToken, authorization);
          if (!callers.has(ctx)) callers.set(ctx, new Map());
          callers.get(ctx)!.set(id, { viewer, authorization });
          return undefined;
        } catch (error) {
          if (!(error instanceof InvalidTokenError)) throw error;
          return [new GraphQLError(error.message, { extensions: { code: ErrorCode.UNAUTHENTICATED } })];
        }
      },
      context: (ctx, id) => options.createContext(callerOf(ctx, id) ?? authentication.identityOf(ctx)),
      onComplete: (ctx, id) => void callers.get(ctx)?.delete(id),
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
