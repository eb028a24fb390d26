// Builds the gateway: Hive Gateway serving the composed supergraph at /graphql, with the edge plugins, one file per
// concern. Does not listen on its own; index.ts (or a test) calls listen().
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createGatewayRuntime } from '@graphql-hive/gateway-runtime';
import {
  INTERNAL_ERROR_MESSAGE,
  REQUEST_ID_HEADER,
  authSettings,
  createMetricsRegistry,
  createTokenVerifier,
  redisTarget,
  requestIdFrom,
  withRequest,
  type Logger,
} from '@ordergraph/common';
import { useAuthentication } from './auth.js';
import { introspectionMode, subgraphUrlOverrides, type GatewayConfig } from './config.js';
import { createErrorPolicy, useErrorPolicy } from './errors.js';
import { hiveLogger } from './logging.js';
import { useHttpSemantics } from './http.js';
import { useIntrospectionPolicy } from './introspection.js';
import { edgePlugins } from './edge.js';
import { plannerOptions, useResultCompletion } from './query-planner.js';
import { useMetrics } from './metrics.js';
import { openSharedState } from './shared-state.js';
import { SUBSCRIPTION_TRANSPORT, subscriptionTracking } from './subscriptions.js';
import { serveWebSockets } from './websocket.js';

const GRAPHQL_ENDPOINT = '/graphql';
const READINESS_ENDPOINT = '/readyz';

export interface GatewayOptions {
  config: GatewayConfig;
  /** The supergraph SDL to serve, or a source polled every SUPERGRAPH_POLL_INTERVAL ms for a new one (supergraph-source.ts). */
  supergraph: string | (() => string | Promise<string>);
  logger: Logger;
}

export interface Gateway {
  listen(port: number, host?: string): Promise<string>;
  stop(): Promise<void>;
}

export function createGateway({ config, supergraph, logger }: GatewayOptions): Gateway {
  const production = config.NODE_ENV === 'production';
  const registry = createMetricsRegistry('gateway');
  const subscriptions = subscriptionTracking(registry, logger);
  const verify = createTokenVerifier(authSettings(config));
  const publicError = createErrorPolicy({ production });
  const transportEntries = Object.fromEntries(
    Object.entries(subgraphUrlOverrides(config)).map(([name, location]) => [name, { location }]),
  );
  Object.assign(transportEntries, SUBSCRIPTION_TRANSPORT);

  const shared = openSharedState(redisTarget(config), logger, production, registry);
  const edge = edgePlugins({ config, redis: shared.redis, logger, graphqlEndpoint: GRAPHQL_ENDPOINT, readinessEndpoint: READINESS_ENDPOINT });

  const runtime = createGatewayRuntime({
    supergraph,
    ...(typeof supergraph === 'function' && config.SUPERGRAPH_POLL_INTERVAL > 0 ? { pollingInterval: config.SUPERGRAPH_POLL_INTERVAL } : {}),
    // On a new supergraph, requests already running finish on the previous one instead of being aborted.
    gracefulSchemaReload: { drainTimeout: config.SUPERGRAPH_DRAIN_TIMEOUT },
    transportEntries,
    ...plannerOptions(config.QUERY_PLANNER),
    graphqlEndpoint: GRAPHQL_ENDPOINT,
    healthCheckEndpoint: '/healthz',
    readinessCheckEndpoint: READINESS_ENDPOINT,
    landingPage: !production,
    graphiql: !production,
    logging: hiveLogger(logger, config.LOG_LEVEL),
    // Identity flows to the subgraphs as the caller's own bearer token, which they verify themselves; the request ID
    // (set by the HTTP server below) so their log lines about this request carry it too.
    propagateHeaders: {
      fromClientToSubgraphs: ({ request }) => {
        const authorization = request.headers.get('authorization');
        const requestId = request.headers.get(REQUEST_ID_HEADER);
        return { ...(authorization ? { authorization } : {}), ...(requestId ? { [REQUEST_ID_HEADER]: requestId } : {}) };
      },
    },
    plugins: () => [
      useMetrics(registry),
      useAuthentication(verify, logger),
      useHttpSemantics(GRAPHQL_ENDPOINT),
      useIntrospectionPolicy(introspectionMode(config)),
      useErrorPolicy(publicError),
      subscriptions.plugin,
      ...(config.QUERY_PLANNER === 'rust' ? [useResultCompletion()] : []),
      ...edge,
    ],
    // Unexpected failures reach clients as the generic INTERNAL_SERVER_ERROR, never with a stack, in every mode.
    maskedErrors: { isDev: false, errorMessage: INTERNAL_ERROR_MESSAGE, maskError: publicError },
  });

  // Every request runs with its ID (the client's when well-formed, else a new one): in its log lines, its response's
  // header, the headers sent to subgraphs and its errors.
  const server = http.createServer((request, response) => {
    const requestId = requestIdFrom(request.headers[REQUEST_ID_HEADER] as string | undefined);
    request.headers[REQUEST_ID_HEADER] = requestId;
    response.setHeader(REQUEST_ID_HEADER, requestId);
    withRequest(requestId, () => void runtime(request, response));
  });
  const websockets = serveWebSockets(server, runtime, {
    path: GRAPHQL_ENDPOINT,
    verify,
    maxSubscriptionsPerConnection: config.MAX_SUBSCRIPTIONS_PER_CONNECTION,
    connectionInitWaitTimeoutMs: config.WS_CONNECTION_INIT_TIMEOUT_MS,
    keepAliveMs: config.WS_KEEPALIVE_MS,
    publicError,
    logger,
  });
  return {
    async listen(port, host = '0.0.0.0') {
      await shared.connected();
      return new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          const { port: bound } = server.address() as AddressInfo;
          const url = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${bound}/graphql`;
          logger.info({ url }, 'gateway listening');
          resolve(url);
        });
      });
    },
    async stop() {
      // WebSocket clients are told 1001 (Going away) and SSE streams cut, so both reconnect elsewhere; other
      // in-flight requests finish.
      await websockets.dispose();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
        subscriptions.cutEventStreams();
      });
      await runtime.dispose();
      await shared.close();
      logger.info('gateway stopped');
    },
  };
}
