// Builds the gateway: Hive Gateway serving the composed supergraph at /graphql with the plugins of plugins.ts, and the
// HTTP and WebSocket servers in front of it. Does not listen on its own; index.ts (or a test) calls listen().
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createGatewayRuntime } from '@graphql-hive/gateway-runtime';
import httpTransport from '@graphql-mesh/transport-http';
import wsTransport from '@graphql-mesh/transport-ws';
import {
  INTERNAL_ERROR_MESSAGE,
  REQUEST_ID_HEADER,
  authSettings,
  createMetricsRegistry,
  createTokenVerifier,
  redisTarget,
  shutdownSettings,
  type Drainable,
  requestIdFrom,
  withRequest,
  type Logger,
} from '@ordergraph/core';
import { corsOrigins, subgraphErrorInclusion, upstreamSettings, type GatewayConfig } from './config.js';
import { withEntityBatching } from './execution/entity-batching.js';
import { withPlanWarmup } from './execution/plan-warmup.js';
import { withOverrideLabels, withPlannableOverrides } from './execution/progressive-override.js';
import { plannerOptions } from './execution/query-planner.js';
import { hiveLogger, subgraphRequestId } from './observability/logging.js';
import type { OpenTelemetryPlugin } from './observability/opentelemetry.js';
import type { McpRuntime } from './mcp/endpoint.js';
import { gatewayPlugins } from './plugins.js';
import { authorizationDirectives } from './security/authorization.js';
import { createErrorPolicy } from './security/errors.js';
import { httpDrain } from './server/drain.js';
import { graphiqlOptions } from './server/graphiql.js';
import { GatewayResponse, requestDeadline } from './server/http.js';
import { corsPolicy, securityHeaders } from './server/response-headers.js';
import { openSharedState } from './shared/shared-state.js';
import { subgraphHttpClient } from './subgraphs/http-client.js';
import { callerHeaders, upstreams } from './subgraphs/upstream.js';
import { withSubgraphUrls, type SupergraphSource } from './subgraph-urls.js';
import { serveWebSockets } from './subscriptions/websocket.js';
import { SUBSCRIPTION_TRANSPORT_OPTIONS, subscriptionTracking } from './subscriptions/tracking.js';

/** How a subscriber that stopped reading is disconnected, for clients and tests to recognise it. */
export { SLOW_SUBSCRIBER_CLOSE } from './subscriptions/tracking.js';
/** Where a client's rate-limit counter lives in Redis, for operators (and tests) to read it. */
export { rateLimitKey } from './limits/rate-limit.js';

const GRAPHQL_ENDPOINT = '/graphql';
const READINESS_ENDPOINT = '/readyz';

export interface GatewayOptions {
  config: GatewayConfig;
  /** The supergraph SDL to serve, or a source polled every SUPERGRAPH_POLL_INTERVAL ms for a new one (supergraph-source.ts). */
  supergraph: SupergraphSource;
  logger: Logger;
  /** Hive's OpenTelemetry plugin, when tracing is on (index.ts loads it only then). */
  openTelemetry?: OpenTelemetryPlugin | undefined;
}

export interface Gateway extends Drainable {
  listen(port: number, host?: string): Promise<string>;
  /** Stops accepting, closes WebSockets (1001) and SSE streams, lets in-flight requests finish, then releases resources. */
  stop(): Promise<void>;
}

export function createGateway({ config, supergraph, logger, openTelemetry }: GatewayOptions): Gateway {
  const production = config.NODE_ENV === 'production';
  const registry = createMetricsRegistry('gateway');
  const subscriptions = subscriptionTracking(registry, logger, { maxPendingEvents: config.SUBSCRIPTION_MAX_PENDING_EVENTS });
  const auth = authSettings(config);
  const verify = createTokenVerifier(auth);
  const publicError = createErrorPolicy({ production, includeSubgraphErrors: subgraphErrorInclusion(config) });
  // Routing URL overrides are written into each supergraph served (subgraph-urls.ts), not into these entries, fixed
  // when the gateway is built, before the subgraphs of a supergraph loaded later are known.
  const transportEntries = {
    // Identical queries in flight are shared by useQueryCancellation (upstream.ts), which can also cancel them; not by
    // the HTTP executor, whose sharing cannot.
    '*.http': { options: { ...SUBSCRIPTION_TRANSPORT_OPTIONS, deduplicateInflightRequests: false } },
  };

  const shared = openSharedState(redisTarget(config), logger, production, registry);
  const subgraphCalls = upstreams(upstreamSettings(config), logger);
  const authorization = authorizationDirectives();

  // What the MCP door (mcp/) asks of the runtime: called only while requests are served, once `runtime` exists.
  const mcpRuntime: McpRuntime = {
    schema: () => runtime.getSchema(),
    handle: (request, serverContext) => runtime.handleRequest(request, serverContext),
  };
  const httpClient = subgraphHttpClient();
  const runtime = createGatewayRuntime({
    fetchAPI: { fetch: httpClient.fetch },
    supergraph: withPlannableOverrides(withSubgraphUrls(supergraph, config, logger), config.QUERY_PLANNER === 'js'),
    ...(typeof supergraph === 'function' && config.SUPERGRAPH_POLL_INTERVAL > 0 ? { pollingInterval: config.SUPERGRAPH_POLL_INTERVAL } : {}),
    // On a new supergraph, requests already running finish on the previous one instead of being aborted.
    gracefulSchemaReload: { drainTimeout: config.SUPERGRAPH_DRAIN_TIMEOUT },
    transportEntries,
    // Given, not imported by name at run time: in the bundle (scripts/bundle.ts) a transport loaded that way brings
    // its own copies of its dependencies, and prints each subgraph query anew instead of sending the planner's text,
    // which the subgraph signature covers (useSubgraphSignature).
    transports: { http: httpTransport, ws: wsTransport },
    // No request batching per subgraph: its DataLoader (@graphql-tools/batch-execute) lives as long as the operation's
    // context and caches every request it sends, so an open subscription kept each event's entity fetches until it
    // ended (graphql-hive/gateway#1085). The planner fetches an event's entities of one stream in one call per
    // subgraph; those of different streams are batched by entity-batching.ts, without a cache.
    __experimental__batchExecution: false,
    // The entity fetches of subscription events, batched across streams (entity-batching.ts).
    // And the custom override labels a request turns on (progressive-override.ts); percent(n) labels the Rust planner
    // decides from one random value per request, so all of a request's fetches agree on a side.
    // Outermost, the warm-up of each reloaded supergraph's plans with the operations most used (plan-warmup.ts).
    unifiedGraphHandler: withPlanWarmup(
      withEntityBatching(withOverrideLabels(plannerOptions(config.QUERY_PLANNER).unifiedGraphHandler, { header: config.OVERRIDE_LABELS_HEADER, claim: config.OVERRIDE_LABELS_CLAIM }), {
        windowMs: config.ENTITY_BATCH_WINDOW_MS,
        maxBatchSize: config.ENTITY_BATCH_MAX_FETCHES,
      }),
      { operations: config.SUPERGRAPH_WARMUP_OPERATIONS, timeoutMs: config.SUPERGRAPH_WARMUP_TIMEOUT_MS },
      logger,
      registry,
    ),
    graphqlEndpoint: GRAPHQL_ENDPOINT,
    // @defer (and @stream, which defer.ts refuses) in the schema, answered in parts (multipart/mixed, deferSpec=20220824)
    // by yoga; defer.ts decides which planner executes them and refuses clients that cannot read parts.
    deferStream: true,
    // Each operation of a batch runs through every plugin on its own (limits, rate limits, persisted queries, auth).
    ...(config.BATCH_MAX_OPERATIONS > 0 ? { batching: { limit: config.BATCH_MAX_OPERATIONS } } : {}),
    healthCheckEndpoint: '/healthz',
    readinessCheckEndpoint: READINESS_ENDPOINT,
    landingPage: !production,
    cors: corsPolicy(corsOrigins(config)),
    ...graphiqlOptions(config, auth.jwtSecret),
    logging: hiveLogger(logger, config.LOG_LEVEL),
    // Request IDs are ours: taken by the HTTP server below and the WebSocket server, sent on with the caller's headers.
    requestId: false,
    // Identity flows to the subgraphs as the caller's own bearer token, which they verify themselves. It is part of
    // the key under which identical in-flight subgraph queries are shared, so different identities never share an
    // answer. The request ID (logging.ts) is not, so a shared subgraph request carries the ID of the request that
    // started it.
    propagateHeaders: {
      fromClientToSubgraphs: ({ request }) => ({ ...callerHeaders(request), ...subgraphRequestId() }),
    },
    // In the order plugins.ts gives, with a reason for each place.
    plugins: (context) =>
      gatewayPlugins({
        config,
        logger,
        registry,
        redis: shared.redis,
        verify,
        publicError,
        authorization,
        subscriptions,
        subgraphCalls,
        graphqlEndpoint: GRAPHQL_ENDPOINT,
        readinessEndpoint: READINESS_ENDPOINT,
        runtime: mcpRuntime,
        openTelemetry: openTelemetry?.(context, GRAPHQL_ENDPOINT),
      }),
    // Unexpected failures reach clients as the generic INTERNAL_SERVER_ERROR, never with a stack, in every mode.
    maskedErrors: { isDev: false, errorMessage: INTERNAL_ERROR_MESSAGE, maskError: publicError },
  });

  const shutdown = shutdownSettings(config);
  const server = http.createServer({ ServerResponse: GatewayResponse });
  const drain = httpDrain(server);
  const secure = securityHeaders(production);
  // Every request runs with its ID (the client's when well-formed, else a new one): in its log lines, its response's
  // header, the headers sent to subgraphs and its errors.
  server.on('request', (request: http.IncomingMessage, response: http.ServerResponse) => {
    const requestId = requestIdFrom(request.headers[REQUEST_ID_HEADER] as string | undefined);
    request.headers[REQUEST_ID_HEADER] = requestId;
    response.setHeader(REQUEST_ID_HEADER, requestId);
    secure(response);
    if (drain.draining && request.url?.split('?')[0] === READINESS_ENDPOINT) {
      response.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ status: 'draining' }));
      return;
    }
    withRequest(requestId, () => {
      requestDeadline(request, response, config.REQUEST_DEADLINE_MS);
      void runtime(request, response);
    });
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
    shutdown,
    beginDrain: () => drain.begin(),
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
      // The listener closes first; WebSocket clients are told 1001 (Going away) and SSE streams cut, so both reconnect
      // elsewhere; every other in-flight request finishes, with its subgraph calls, before the transports are disposed.
      const closed = drain.close(shutdown.drainTimeoutMs);
      await websockets.dispose();
      subscriptions.cutEventStreams();
      if (!(await closed)) logger.warn({ drainTimeoutMs: shutdown.drainTimeoutMs }, 'drain deadline passed; open connections were cut');
      await runtime.dispose();
      await httpClient.close();
      await shared.close();
      logger.info('gateway stopped');
    },
  };
}
