// The edge plugins in the order they must run, for every operation whatever its transport (HTTP, WebSocket, SSE),
// all before any subgraph is called.
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';
import type { Logger, Redis } from '@ordergraph/core';
import type { Registry } from 'prom-client';
import { createCacheControl } from './cache-control.js';
import type { GatewayConfig } from './config.js';
import { useInputLimits } from './input.js';
import { limitedParser, useOperationLimits, type MeasuredCosts } from './limits.js';
import { createOperationReader, viewerOf } from './operation.js';
import { EMPTY_MANIFEST, watchManifest } from './persisted-manifest.js';
import { persistedQueriesMode, usePersistedDocuments } from './persisted-queries.js';
import { useCostRateLimit, useRateLimits } from './rate-limit.js';
import { useSharedResponseCache } from './response-cache.js';
import { useRedisReadiness } from './shared-state.js';
import { useTracing, wantsTracing } from './tracing.js';

export interface EdgeOptions {
  config: GatewayConfig;
  redis: Redis | undefined;
  logger: Logger;
  /** Where the edge's own metrics register (the gateway's /metrics). */
  registry: Registry;
  graphqlEndpoint: string;
  readinessEndpoint: string;
}

/** The bounds on a request's input values, checked before any other plugin reads them (so first of all plugins). */
export const inputLimits = (config: GatewayConfig) =>
  useInputLimits({
    maxOperationNameLength: config.MAX_OPERATION_NAME_LENGTH,
    maxVariablesDepth: config.MAX_VARIABLES_DEPTH,
    maxVariableValues: config.MAX_VARIABLE_VALUES,
    maxStringLength: config.MAX_STRING_LENGTH,
    stringLimits: config.STRING_LIMITS,
  });

// Persisted queries turn a hash into its document; the rate limit counts the operation that document will execute
// (and may refuse it); the cache policy and a cached public response come next, so neither a persisted query, a cache
// hit nor a conditional request answered 304 (response-cache.ts) skips the rate limit; then tokens, depth, aliases and
// directives bound parsing and validation, and complexity is measured just before execution (the cost budget, when
// there is one, is charged what it measured); tracing times the execution itself.
export function edgePlugins({ config, redis, logger, registry, graphqlEndpoint, readinessEndpoint }: EdgeOptions): GatewayPlugin[] {
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
  const readOperation = createOperationReader(limitedParser(operationLimits));
  const measuredCosts: MeasuredCosts = new WeakMap();
  const cacheControl = createCacheControl({ readOperation, graphqlEndpoint });
  return [
    useRedisReadiness(redis, readinessEndpoint, logger),
    usePersistedDocuments({
      mode: persistedQueriesMode(config.PERSISTED_QUERIES),
      manifest: config.PERSISTED_QUERIES_MANIFEST
        ? watchManifest(config.PERSISTED_QUERIES_MANIFEST, config.PERSISTED_QUERIES_MANIFEST_POLL_MS, logger)
        : EMPTY_MANIFEST,
      adminBypass: config.PERSISTED_QUERIES_ADMIN_BYPASS === 'on',
      redis,
      logger,
      registry,
    }),
    useRateLimits(
      {
        windowMs: config.RATE_LIMIT_WINDOW_MS,
        max: config.RATE_LIMIT_MAX,
        expensiveMax: config.RATE_LIMIT_EXPENSIVE_MAX,
        expensiveOperations: config.RATE_LIMIT_EXPENSIVE_OPERATIONS,
        trustProxyHops: config.TRUST_PROXY_HOPS,
      },
      redis,
      readOperation,
    ),
    useOperationLimits(operationLimits, measuredCosts),
    ...(config.RATE_LIMIT_COST_PER_WINDOW > 0
      ? [
          useCostRateLimit(
            { perWindow: config.RATE_LIMIT_COST_PER_WINDOW, windowMs: config.RATE_LIMIT_WINDOW_MS, trustProxyHops: config.TRUST_PROXY_HOPS },
            redis,
            (context) => measuredCosts.get(context),
          ),
        ]
      : []),
    cacheControl.plugin,
    useSharedResponseCache({
      redis,
      logger,
      maxAge: (request) => {
        const policy = cacheControl.policyOf(request);
        return policy?.scope === 'PUBLIC' ? policy.maxAge : 0;
      },
      cacheable: (request, context) => viewerOf(context) === null && !wantsTracing(request),
      mutates: (context) => readOperation((context as { params?: { query?: string } }).params ?? {})?.operation.operation === 'mutation',
    }),
    useTracing({ production: config.NODE_ENV === 'production', cost: (context) => ({ estimated: measuredCosts.get(context), max: config.MAX_COMPLEXITY }) }),
  ];
}
