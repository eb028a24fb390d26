// Every plugin of the gateway, in the order they run: the one place that says what happens to a request and when. The
// runtime calls each hook (onRequest, onParams, onParse, onValidate, onExecute, onSubgraphExecute, onFetch, onResponse)
// plugin by plugin in this order, for every operation whatever its transport (HTTP, WebSocket, SSE). Each folder of
// src/ holds one concern; this list only decides the order.
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';
import type { GraphQLError } from 'graphql';
import { signingSecret, type Logger, type Redis, type TokenVerifier } from '@ordergraph/core';
import type { Registry } from 'prom-client';
import { createCacheControl } from './caching/cache-control.js';
import { createEntityCache } from './caching/entity-cache.js';
import { memoryEntityStore, redisEntityStore, type EntityStore } from './caching/entity-store.js';
import { useClientIdentity } from './clients/identity.js';
import { useSharedResponseCache } from './caching/response-cache.js';
import { introspectionMode, type GatewayConfig } from './config.js';
import { useIncrementalDelivery } from './execution/defer.js';
import { createOperationReader, viewerOf } from './execution/operation.js';
import { namesOverrideLabels, requestOverrideLabels } from './execution/progressive-override.js';
import { useQueryPlanInspection, useResultCompletion } from './execution/query-planner.js';
import { withSharedSubgraphHooks } from './execution/subgraph-hooks.js';
import { useInputLimits } from './limits/input.js';
import { limitedParser, useOperationLimits, type MeasuredCosts } from './limits/operation-limits.js';
import { useCostRateLimit, useRateLimits } from './limits/rate-limit.js';
import { useMcp, type McpRuntime } from './mcp/endpoint.js';
import { useMetrics } from './observability/metrics.js';
import { useTracing, wantsTracing } from './observability/tracing.js';
import { EMPTY_MANIFEST, documentOwner, watchManifest } from './persisted-queries/manifest.js';
import { persistedQueriesMode, usePersistedDocuments } from './persisted-queries/persisted-queries.js';
import { useAuthentication } from './security/auth.js';
import type { AuthorizationDirectives } from './security/authorization.js';
import { createWebSocketFormatter, useErrorPolicy } from './security/errors.js';
import { useApiSchemaIntrospection, useIntrospectionPolicy } from './security/introspection.js';
import { useHttpSemantics } from './server/http.js';
import { useResponseHeaders } from './server/response-headers.js';
import { useRedisReadiness } from './shared/shared-state.js';
import { requestSigner, useQueryCancellation, useReadinessReport, useSubgraphSignature, type Upstreams } from './subgraphs/upstream.js';
import { useEventStreams } from './subscriptions/event-stream.js';
import { useMultipartSubscriptions } from './subscriptions/multipart.js';
import { useSubscriptionRequests } from './shared/subscription-requests.js';
import { useSubscriptionSharing } from './subscriptions/sharing.js';
import type { SubscriptionTracking } from './subscriptions/tracking.js';

export interface PluginOptions {
  config: GatewayConfig;
  logger: Logger;
  /** Where the gateway's own metrics register (its /metrics). */
  registry: Registry;
  /** The Redis replicas share state through; undefined keeps it in this process (development only). */
  redis: Redis | undefined;
  verify: TokenVerifier;
  /** What a client may see of an error (security/errors.ts). */
  publicError: (error: unknown) => GraphQLError;
  authorization: AuthorizationDirectives;
  subscriptions: SubscriptionTracking;
  subgraphCalls: Upstreams;
  graphqlEndpoint: string;
  readinessEndpoint: string;
  /** The runtime these plugins serve, for the MCP door's tool calls (mcp/endpoint.ts). */
  runtime: McpRuntime;
  /** Hive's OpenTelemetry plugin for this runtime, and what adds our attributes to its spans, when tracing is on. */
  openTelemetry?: GatewayPlugin[] | undefined;
}

export function gatewayPlugins(options: PluginOptions): GatewayPlugin[] {
  const { config, logger, registry, redis, authorization, subgraphCalls, graphqlEndpoint, readinessEndpoint } = options;
  const operationLimits = {
    maxNesting: config.MAX_NESTING,
    maxFields: config.MAX_FIELDS,
    maxDepth: config.MAX_DEPTH,
    maxComplexity: config.MAX_COMPLEXITY,
    maxAliases: config.MAX_ALIASES,
    maxTokens: config.MAX_TOKENS,
    maxDirectivesPerField: config.MAX_DIRECTIVES_PER_FIELD,
    maxDuplicateFields: config.MAX_DUPLICATE_FIELDS,
    maxOperationNameLength: config.MAX_OPERATION_NAME_LENGTH,
  };
  // The plugins before the operation limits read the document through the same bounded parser, once per text.
  const readOperation = createOperationReader(limitedParser(operationLimits));
  const measuredCosts: MeasuredCosts = new WeakMap();
  const cacheControl = createCacheControl({ readOperation, graphqlEndpoint });
  const subgraphSigningSecret = signingSecret(config);
  // The trusted documents: served by id (persisted-queries/), and offered as tools by the MCP door (mcp/).
  const manifest = config.PERSISTED_QUERIES_MANIFEST
    ? watchManifest(config.PERSISTED_QUERIES_MANIFEST, config.PERSISTED_QUERIES_MANIFEST_POLL_MS, logger)
    : EMPTY_MANIFEST;
  // The generations both caches check, and every write bumps (caching/entity-store.ts).
  const memoryBounds = { entries: config.ENTITY_CACHE_MEMORY_ENTRIES, bytes: config.ENTITY_CACHE_MEMORY_BYTES };
  // Generations outlive every entry stamped with them, with a minute to spare.
  const generationTtlMs = (config.ENTITY_CACHE_MAX_TTL + 60) * 1000;
  const generations = redis ? redisEntityStore(redis, memoryBounds, generationTtlMs, logger) : memoryEntityStore(memoryBounds);

  return [
    // First, so that its request span holds every other plugin's work.
    ...(options.openTelemetry ?? []),
    // Their hooks around each subgraph call, one of each kind (subgraph-hooks.ts), run in this same order.
    ...withSharedSubgraphHooks([
      // The request's input values (operation name, variables, strings), bounded before any other plugin reads them.
      useInputLimits({
        maxOperationNameLength: config.MAX_OPERATION_NAME_LENGTH,
        maxVariablesDepth: config.MAX_VARIABLES_DEPTH,
        maxVariableValues: config.MAX_VARIABLE_VALUES,
        maxStringLength: config.MAX_STRING_LENGTH,
        stringLimits: config.STRING_LIMITS,
      }),
      // Before the metrics, so that the refusals the authorization directives add to a result are counted with it.
      ...authorization.plugins,
      useMetrics(registry, { operationNames: config.METRICS_OPERATION_NAMES, clientNames: config.METRICS_CLIENT_NAMES, clientVersions: config.METRICS_CLIENT_VERSIONS }),
      // The caller's token, verified once; every later plugin reads the viewer it puts on the context.
      useAuthentication(options.verify, logger),
      // The MCP door answers its own path, once the token is verified (a bad one is 401 already); each tool call it
      // makes is a new request to /graphql that meets every plugin of this list, from the first.
      ...(config.MCP === 'on' ? [useMcp({ path: config.MCP_PATH, graphqlEndpoint, manifest, runtime: options.runtime, logger, registry })] : []),
      // GraphQL over HTTP beyond yoga's: 415, 413, the GET preflight header; it also sets each request's signal.
      useHttpSemantics(graphqlEndpoint),
      useIntrospectionPolicy(introspectionMode(config)),
      useApiSchemaIntrospection(),
      useSubscriptionRequests(),
      useErrorPolicy(options.publicError),
      // Which planner runs @defer, and clients that cannot read parts refused.
      useIncrementalDelivery(),
      // Before the multipart processor, which streams the subscriptions whose Accept yoga's event stream does not take.
      useEventStreams(),
      useMultipartSubscriptions(createWebSocketFormatter(options.publicError).formatResult),
      options.subscriptions.plugin,
      useResultCompletion(authorization.documentAsSent),
      useQueryPlanInspection(),
      // The edge, all before any subgraph is called. Readiness reports Redis first.
      useRedisReadiness(redis, readinessEndpoint, logger),
      // A persisted query's hash becomes its document first, so every later check sees the operation it executes; a
      // client's own manifest operations are served to that client only.
      usePersistedDocuments({
        mode: persistedQueriesMode(config.PERSISTED_QUERIES),
        manifest,
        adminBypass: config.PERSISTED_QUERIES_ADMIN_BYPASS === 'on',
        redis,
        logger,
        registry,
      }),
      // Who the client is, by its headers or else its document (known only now): the rate limits below, the metrics and
      // the spans read it.
      useClientIdentity(documentOwner(manifest)),
      // Before the cache, so that neither a cache hit nor a 304 skips it; it counts the operation the document names.
      useRateLimits(
        {
          windowMs: config.RATE_LIMIT_WINDOW_MS,
          max: config.RATE_LIMIT_MAX,
          expensiveMax: config.RATE_LIMIT_EXPENSIVE_MAX,
          expensiveOperations: config.RATE_LIMIT_EXPENSIVE_OPERATIONS,
          trustProxyHops: config.TRUST_PROXY_HOPS,
          maxByClient: config.RATE_LIMIT_MAX_BY_CLIENT,
          clientClaim: config.RATE_LIMIT_CLIENT_CLAIM,
        },
        redis,
        readOperation,
      ),
      // Nesting, tokens and the expanded size while parsing; directives and repeats before validation; complexity just
      // before execution, when the variables are known.
      useOperationLimits(operationLimits, measuredCosts, readOperation.parse),
      // Charged what the complexity limit measured, so after it.
      ...(config.RATE_LIMIT_COST_PER_WINDOW > 0 || Object.keys(config.RATE_LIMIT_COST_PER_WINDOW_BY_CLIENT).length > 0
        ? [
            useCostRateLimit(
              {
                perWindow: config.RATE_LIMIT_COST_PER_WINDOW,
                perWindowByClient: config.RATE_LIMIT_COST_PER_WINDOW_BY_CLIENT,
                clientClaim: config.RATE_LIMIT_CLIENT_CLAIM,
                windowMs: config.RATE_LIMIT_WINDOW_MS,
                trustProxyHops: config.TRUST_PROXY_HOPS,
              },
              redis,
              (context) => measuredCosts.get(context),
            ),
          ]
        : []),
      // The response's cache policy (Cache-Control), then a cached public response: both after every refusal above.
      cacheControl.plugin,
      useSharedResponseCache({
        redis,
        generations,
        memory: RESPONSE_CACHE_MEMORY,
        logger,
        registry,
        maxAge: (request) => {
          const policy = cacheControl.policyOf(request);
          return policy?.scope === 'PUBLIC' ? policy.maxAge : 0;
        },
        // Not for a request that turns override labels on (progressive-override.ts): the other side's answer.
        cacheable: (request, context) => viewerOf(context) === null && !wantsTracing(request) && !namesOverrideLabels(request, config.OVERRIDE_LABELS_HEADER),
      }),
      // Times the execution itself, reporting the cost the limits measured.
      useTracing({
        production: config.NODE_ENV === 'production',
        cost: (context) => ({ estimated: measuredCosts.get(context), max: config.MAX_COMPLEXITY }),
      }),
      // Every subgraph call is signed (HMAC of its query and variables, over HTTP and WebSocket alike): in production
      // the subgraphs serve nothing else, so only what passed the edge above reaches them.
      ...(subgraphSigningSecret ? [useSubgraphSignature(subgraphSigningSecret)] : []),
      // Timeouts, retries and circuit breakers of each subgraph call (subgraphs/upstream.ts).
      ...subgraphCalls.plugins,
      // Identical subgraph queries in flight shared, and cancelled when no request waits for them any more.
      useQueryCancellation(),
      // After every plugin that wraps the subgraph executor, so that an entity served from the cache meets no
      // timeout, retry or breaker, and a fetch narrowed to what the cache lacks is shared, timed and signed as sent.
      // Always there: it bumps what every write changed, for the response cache too.
      entityCache(options, generations),
      useReadinessReport(readinessEndpoint, subgraphCalls.states),
      useResponseHeaders(),
      // Last, so that it shares the subscribe function every other plugin has settled on.
      useSubscriptionSharing(requestOverrideLabels({ header: config.OVERRIDE_LABELS_HEADER, claim: config.OVERRIDE_LABELS_CLAIM })),
    ]),
  ];
}

/** Responses one gateway keeps without Redis (development). */
const RESPONSE_CACHE_MEMORY = { entries: 1000, bytes: 16 * 1024 * 1024 };

function entityCache({ config, logger, registry }: PluginOptions, store: EntityStore): GatewayPlugin {
  const secret = signingSecret(config);
  return createEntityCache({
    store,
    fetches: config.ENTITY_CACHE,
    invalidationKey: config.CACHE_INVALIDATION_KEY,
    logger,
    registry,
    sign: secret ? requestSigner(secret) : undefined,
    ttls: config.ENTITY_CACHE_TTLS,
    maxTtlSeconds: config.ENTITY_CACHE_MAX_TTL,
    sharedSubgraphs: new Set(config.ENTITY_CACHE_SHARED_SUBGRAPHS),
  }).plugin;
}
