import { z } from 'zod';
import { subgraphUrlVariable } from '@ordergraph/composition/paths';
import { baseEnvSchema, loadConfig, redisEnvShape, redisSettingsProblem } from '@ordergraph/core';
import { clientName } from './clients/identity.js';
import { INTROSPECTION_MODES, type IntrospectionMode } from './security/introspection.js';
import type { UpstreamSettings } from './subgraphs/upstream.js';
import { PERSISTED_QUERIES_MODES } from './persisted-queries/persisted-queries.js';
import { QUERY_PLANNERS } from './execution/query-planner.js';

const GRAPHIQL_MODES = ['on', 'off'] as const;
/** Paths the gateway serves already, which MCP_PATH may not take. */
const RESERVED_PATHS = ['/graphql', '/healthz', '/readyz', '/metrics', '/cache/invalidate', '/entity-cache/purge'];

const count = (fallback: number) => z.coerce.number().int().min(1).default(fallback);
const names = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((list) => list.split(',').map((name) => name.trim()).filter(Boolean));
/** Values by key, as comma-separated `key=value` pairs (a key may hold anything but `=` and `,`); `read` refuses a value with undefined. */
const byKey = <T>(fallback: string, form: string, read: (value: string) => T | undefined) =>
  z
    .string()
    .default(fallback)
    .transform((list, context) => {
      const values: Record<string, T> = {};
      for (const pair of list.split(',').map((entry) => entry.trim()).filter(Boolean)) {
        const at = pair.lastIndexOf('=');
        const [key, value] = [pair.slice(0, at), read(pair.slice(at + 1))];
        if (at < 1 || value === undefined) context.addIssue({ code: 'custom', message: `"${pair.slice(0, 60)}" is not ${form}` });
        else values[key] = value;
      }
      return values;
    });
/** Positive whole numbers by key, as `key=n` pairs. */
const numbersByKey = (fallback: string, form: string) => byKey(fallback, form, (value) => (/^[1-9][0-9]*$/.test(value) ? Number(value) : undefined));
/** Whole seconds (0 included) by key, as `key=n` pairs. */
const secondsByKey = (form: string) => byKey('', form, (value) => (/^(0|[1-9][0-9]*)$/.test(value) ? Number(value) : undefined));
/** Positive whole numbers by client name, as `name=n` pairs; a name no request could declare is refused. */
const numbersByClient = (form: string) =>
  numbersByKey('', form).superRefine((values, context) => {
    for (const name of Object.keys(values)) {
      if (clientName(name) === undefined) context.addIssue({ code: 'custom', message: `"${name.slice(0, 60)}" is not a client name (letters, digits, spaces and . _ @ / : + -, at most 64)` });
    }
  });
/** true or false by key, as `key=true` and `key=false` pairs. */
const flagsByKey = (form: string) => byKey('', form, (value) => (value === 'true' ? true : value === 'false' ? false : undefined));

/**
 * A routing URL override: SUBGRAPH_<NAME>_URL, <NAME> being a subgraph's name in the supergraph being served as
 * envNameOf spells it. Any variable of this form is read, whatever the supergraph, so that one a later supergraph
 * brings (hot reload) is honoured too and a malformed one fails the start.
 */
export const SUBGRAPH_URL_VARIABLE = /^SUBGRAPH_.+_URL$/;
/** How the configuration reference names the overrides: one row for the pattern. */
export const SUBGRAPH_URL_SETTING = 'SUBGRAPH_<NAME>_URL';

/** The SUBGRAPH_<NAME>_URL variables set in `env`. */
export const subgraphUrlVariables = (env: NodeJS.ProcessEnv): string[] =>
  Object.keys(env).filter((name) => SUBGRAPH_URL_VARIABLE.test(name) && env[name] !== '');

const subgraphUrlShape = (variables: readonly string[]) =>
  Object.fromEntries(
    variables.map((variable) => [
      variable,
      // http(s) only: `catalog:4003`, a URL to zod (scheme `catalog:`), is a forgotten scheme, not a routing URL.
      z
        .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
        .optional()
        .describe(
          'Routing URL (http or https) of subgraph `<NAME>` of the supergraph being served (its `join__Graph` name in capitals, `-` as `_`: `SUBGRAPH_CATALOG_URL`), overriding the URL composed into it, where subgraphs do not run where composition said; a subgraph a newly loaded supergraph brings is routed by its variable too.',
        ),
    ]),
  ) as Record<`SUBGRAPH_${string}_URL`, z.ZodOptional<z.ZodURL>>;

/** The gateway's settings; `subgraphUrls`: the SUBGRAPH_<NAME>_URL variables to read (the reference passes the pattern). */
export const gatewayEnvSchemaFor = (subgraphUrls: readonly string[]) => baseEnvSchema.extend({
  PORT: z.coerce.number().int().min(0).max(65535).default(4000).describe('The port the gateway listens on.'),
  HOST: z.string().default('0.0.0.0').describe('The address the gateway listens on.'),
  MAX_SUBSCRIPTIONS_PER_CONNECTION: z.coerce.number().int().min(1).default(20).describe('Subscriptions one WebSocket connection may have active at once.'),
  WS_CONNECTION_INIT_TIMEOUT_MS: z.coerce.number().int().min(1).default(3_000).describe('A WebSocket client that has not sent connection_init by then is closed (4408).'),
  WS_KEEPALIVE_MS: z.coerce.number().int().min(1).default(12_000).describe('WebSocket ping interval; a peer that misses a ping is dropped and its subscriptions released.'),
  SUBSCRIPTION_MAX_PENDING_EVENTS: z.coerce.number().int().min(1).max(1000).default(100).describe('Events a subscriber may leave unread before it is disconnected (WebSocket 1008, SSE stream cut); at most 1000, as each unread event is held in memory until then.'),
  SUPERGRAPH_PATH: z.string().optional().describe('The composed supergraph to serve; `npm run compose` writes it from supergraph.yaml.'),
  SUPERGRAPH_POLL_INTERVAL: z.coerce.number().int().min(0).default(10_000).describe('How often (ms) the gateway re-reads SUPERGRAPH_PATH to pick up a newly composed supergraph; 0 reads it once.'),
  SUPERGRAPH_DRAIN_TIMEOUT: z.coerce.number().int().positive().default(30_000).describe('How long (ms) requests admitted on a replaced supergraph may run on it before it is disposed.'),
  SUPERGRAPH_WARMUP_OPERATIONS: z.coerce.number().int().min(0).max(10_000).default(100).describe('How many of the most used operations are planned on a reloaded supergraph before it serves, so the first requests after a deploy find their plans ready (docs/warm-reload.md); 0 turns the warm-up off.'),
  SUPERGRAPH_WARMUP_TIMEOUT_MS: z.coerce.number().int().positive().default(5_000).describe('How long (ms) the warm-up of a reloaded supergraph may hold its switch back; the previous supergraph serves meanwhile, and plans still running then finish in the background.'),
  ...subgraphUrlShape(subgraphUrls),
  INTROSPECTION: z.enum(INTROSPECTION_MODES).optional().describe('Who may introspect: everyone, administrators only, or no one. Unset: `admin` in production, else `public`.'),
  GRAPHIQL: z.enum(GRAPHIQL_MODES).optional().describe('GraphiQL at /graphql for browsers. Unset: `on` outside production, `off` in production.'),
  CORS_ORIGINS: z
    .string()
    .optional()
    .transform((list) => list?.split(',').map((origin) => origin.trim()).filter(Boolean))
    .describe('Origins browsers may call the gateway from (comma-separated; `*` for any), never with credentials. Unset: none in production, `*` otherwise.'),
  QUERY_PLANNER: z
    .enum(QUERY_PLANNERS)
    .default('rust')
    .describe('rust: Hive\'s Rust query planner (@graphql-hive/router-runtime), the default; js: the JavaScript planner of @graphql-tools/federation, kept for one release as a way back.'),
  // Progressive override (execution/progressive-override.ts, docs/progressive-override.md): percent(n) labels are
  // decided per request by the planner; custom labels by these.
  OVERRIDE_LABELS_HEADER: z
    .string()
    .regex(/^[A-Za-z0-9-]+$/, 'must be a header name')
    .optional()
    .transform((name) => name?.toLowerCase())
    .describe('Request header whose comma-separated labels turn on the supergraph\'s `@override(label:)` of those custom labels for that request (`x-override-labels`). Any caller can send it: prefer OVERRIDE_LABELS_CLAIM for a change not everyone may opt into. Unset: no header is read. `percent(n)` labels are never turned on this way.'),
  OVERRIDE_LABELS_CLAIM: z
    .string()
    .min(1)
    .optional()
    .describe('Claim of the verified bearer token (a string array, or a comma-separated string) whose labels turn on the `@override(label:)` of those custom labels for that request. Unset: no claim is read.'),
  // Shared state of every replica: persisted queries, rate-limit counters, the response cache.
  ...redisEnvShape,

  // Subgraph calls (upstream.ts): a timeout per call (retries included), retries for queries, a breaker per subgraph.
  SUBGRAPH_TIMEOUT_MS: count(5_000).describe('Timeout (ms) of one subgraph call, retries included.'),
  SUBGRAPH_TIMEOUTS: numbersByKey('', 'name=ms')
    .describe('Per-subgraph timeouts overriding SUBGRAPH_TIMEOUT_MS, as `name=ms` pairs: `catalog=2000,users=3000`.'),
  REQUEST_DEADLINE_MS: count(15_000).describe("The whole request's deadline (ms): past it the client gets 504 GATEWAY_TIMEOUT whatever is still running."),
  UPSTREAM_RETRIES: z.coerce.number().int().min(0).max(5).default(1).describe('Retries of a failed subgraph call, for queries only.'),
  UPSTREAM_RETRY_DELAY_MS: count(100).describe('Delay (ms) before the first retry; later retries back off.'),
  CIRCUIT_BREAKER_FAILURES: count(5).describe("Consecutive failures that open a subgraph's circuit (calls then fail fast)."),
  CIRCUIT_BREAKER_RESET_MS: count(10_000).describe('How long (ms) an open circuit waits before one probe call may try the subgraph again.'),
  ENTITY_BATCH_WINDOW_MS: z.coerce.number().int().min(0).max(1000).default(0).describe("How long (ms) a subscription event's entity fetch waits for other streams' fetches to the same subgraph with the same credential, to leave with them as one request; 0, the default, adds no wait and merges those issued in the same tick (an event reaches its streams in one burst)."),
  ENTITY_BATCH_MAX_FETCHES: z.coerce.number().int().min(1).max(500).default(100).describe('Entity fetches one merged subgraph request carries at most.'),
  // What clients see of the errors subgraphs answer (errors.ts), after Apollo Router's include_subgraph_errors.
  INCLUDE_SUBGRAPH_ERRORS: z
    .enum(['true', 'false'])
    .optional()
    .describe("true: an error a subgraph answers without a code of ours keeps its message (still INTERNAL_SERVER_ERROR, at its path, without the subgraph's other extensions); false: its message is `Internal server error`. Errors with a code of ours (NOT_FOUND, FORBIDDEN...) pass either way. Unset: true outside production, false in production."),
  INCLUDE_SUBGRAPH_ERRORS_BY_SUBGRAPH: flagsByKey('subgraph=true|false')
    .describe('Per-subgraph exceptions to INCLUDE_SUBGRAPH_ERRORS, as `name=true|false` pairs: `catalog=false,users=true`.'),

  // Operation limits, checked before any subgraph is called (limits/operation-limits.ts).
  MAX_DEPTH: count(7).describe('Deepest field nesting an operation may have (introspection exempt).'),
  MAX_COMPLEXITY: count(5000).describe('Estimated cost an operation may reach: @cost weights (1 per field by default), lists multiplied by their @listSize or first/limit (10 when absent).'),
  MAX_FIELDS: count(2000).describe('Field selections an operation may make once its fragments are expanded (a fragment spread twice counts twice), measured before anything else reads the document.'),
  MAX_NESTING: count(64).describe('Brackets a document may nest (selection sets, argument lists, list and object values), checked before it is parsed; keep it above MAX_DEPTH.'),
  MAX_ALIASES: count(30).describe('Aliases an operation may use.'),
  MAX_TOKENS: count(5000).describe('Tokens a document may have.'),
  MAX_DIRECTIVES_PER_FIELD: count(10).describe('Directives one field may carry.'),
  MAX_DUPLICATE_FIELDS: z.coerce.number().int().min(0).default(30).describe('Fields a document may repeat within one selection set as written (`__typename __typename`), counted over the document.'),
  MAX_OPERATION_NAME_LENGTH: count(100).describe('Characters an operation name may have, in the document or in `operationName`.'),
  BATCH_MAX_OPERATIONS: z.coerce.number().int().min(0).max(100).default(0).describe('HTTP batching (a JSON array of operations in one POST): the most operations a batch may hold (more: 413); 0, the default, turns batching off (a batch is then 400). Each operation counts on its own against every limit and rate limit.'),

  // Input values, checked on the request before anything else reads them (input.ts).
  MAX_VARIABLES_DEPTH: count(10).describe('Objects and lists the variables may nest.'),
  MAX_VARIABLE_VALUES: count(1000).describe('Values (objects, lists and scalars) the variables may hold.'),
  MAX_STRING_LENGTH: count(10_000).describe('Characters of any string in the variables or the document.'),
  STRING_LIMITS: numbersByKey('CreateUserInput.email=254,CreateUserInput.name=200,UserFilter.email=254,Query.search(query:)=200', 'coordinate=characters')
    .describe('Tighter string limits by schema coordinate, as `coordinate=characters` pairs: `Type.field(argument:)` for an argument, `InputType.field` for an input field.'),
  METRICS_OPERATION_NAMES: count(200).describe('Distinct operation names /metrics labels series with (the first seen); later ones are counted as `other`.'),
  // Client awareness (clients/identity.ts, docs/client-awareness.md).
  METRICS_CLIENT_NAMES: count(20).describe('Distinct client names (`apollographql-client-name`, `graphql-client-name` or the manifest\'s) /metrics labels request series with (the first seen); later ones are counted as `other`.'),
  METRICS_CLIENT_VERSIONS: count(50).describe('Distinct client name and version pairs /metrics labels request series with (the first seen, over all clients); a later version is counted as `other` under its client\'s name.'),

  // Rate limits per client and operation name (rate-limit.ts).
  RATE_LIMIT_WINDOW_MS: count(60_000).refine((ms) => ms % 1000 === 0, 'must be a whole number of seconds').describe('Rate-limit window (ms, whole seconds).'),
  RATE_LIMIT_MAX: count(1000).describe('Requests per client and operation name in a window.'),
  RATE_LIMIT_EXPENSIVE_MAX: count(10).describe('Requests per client in a window for the expensive operations.'),
  RATE_LIMIT_COST_PER_WINDOW: z.coerce
    .number()
    .int()
    .min(0)
    .default(0)
    .describe('Estimated cost (as MAX_COMPLEXITY measures it) each client may spend per rate-limit window, over all its operations; 0, the default, turns the cost budget off. Keep it at least MAX_COMPLEXITY, or an operation the complexity limit allows may never fit.'),
  RATE_LIMIT_MAX_BY_CLIENT: numbersByClient('client=requests')
    .describe('RATE_LIMIT_MAX for requests from a client (by its client name), as `name=requests` pairs: `batch-importer=100,web=2000`. Still counted per caller (user or IP) and operation, whatever client it claims; a value above RATE_LIMIT_MAX applies only to a caller whose verified token binds the name (RATE_LIMIT_CLIENT_CLAIM).'),
  RATE_LIMIT_COST_PER_WINDOW_BY_CLIENT: numbersByClient('client=cost')
    .describe('RATE_LIMIT_COST_PER_WINDOW for requests from a client, as `name=cost` pairs: `reporting=20000`. Counted per caller as the default budget is; with RATE_LIMIT_COST_PER_WINDOW=0 (no budget) it gives that client one. A value above a non-zero default applies only to a caller whose verified token binds the name (RATE_LIMIT_CLIENT_CLAIM).'),
  RATE_LIMIT_CLIENT_CLAIM: z
    .string()
    .min(1)
    .optional()
    .describe('Claim of the verified bearer token that names the client its holder may act as (a string): a per-client rate limit or cost budget more generous than the default applies only when it equals the client name the request declares. Unset: only per-client limits below the defaults apply.'),
  RATE_LIMIT_EXPENSIVE_OPERATIONS: names('GenerateReport,ExportAllUsers,BulkSearch').describe('Operation names limited by RATE_LIMIT_EXPENSIVE_MAX (comma-separated).'),
  TRUST_PROXY_HOPS: z.coerce.number().int().min(0).default(0).describe('Proxies in front of the gateway whose X-Forwarded-For entries are trusted to name the client\'s IP.'),

  PERSISTED_QUERIES: z
    .enum(PERSISTED_QUERIES_MODES)
    .default('apq')
    .describe('apq: automatic persisted queries (any document, registered by hash; the manifest\'s ids served too when one is set); audit: the same, and every document outside the manifest is logged and counted; required: only the manifest\'s documents (`allowlist`, its former name, still works).'),
  PERSISTED_QUERIES_MANIFEST: z.string().optional().describe('Apollo\'s persisted-query manifest (JSON; any id), required with PERSISTED_QUERIES=audit or required; `npm run manifest` builds one.'),
  PERSISTED_QUERIES_MANIFEST_POLL_MS: z.coerce.number().int().min(0).default(10_000).describe('How often (ms) the gateway checks PERSISTED_QUERIES_MANIFEST for a new version and loads it (a bad file keeps the previous one); 0 reads it once.'),
  PERSISTED_QUERIES_ADMIN_BYPASS: z.enum(['on', 'off']).default('on').describe('on: ADMIN tokens may send any document while PERSISTED_QUERIES=required.'),

  // The entity cache (caching/entity-cache.ts, docs/caching.md#the-entity-cache).
  ENTITY_CACHE: z
    .enum(['off', 'public', 'on'])
    .default('public')
    .describe('on: subgraph answers are cached per entity (`_entities` fetches) and per cacheable root-field fetch, for as long as @cacheControl (or ENTITY_CACHE_TTLS) allows, in Redis shared by the replicas, per caller where the answer is not the same for everyone; a mutation drops what it changed (as its subgraphs declare in extensions.invalidation, else the entities its result returns) before its response is sent. public: only the answers shared by every caller (PUBLIC hints, no authorization directive, a subgraph of ENTITY_CACHE_SHARED_SUBGRAPHS). off: subgraphs are asked every time.'),
  ENTITY_CACHE_TTLS: secondsByKey('subgraph.Type=seconds')
    .describe('Seconds by `subgraph.Type` that replace what the @cacheControl hints say for that subgraph\'s fetches of that type: its entity fetches and the root-field fetches returning it (`product(id)` by `catalog.Product`; `subgraph.Query` instead sets every root-field fetch of the subgraph); 0 never caches them. Example: `catalog.Product=60,users.User=0`.'),
  ENTITY_CACHE_MAX_TTL: count(3600).describe('Seconds no entity cache entry outlives, whatever the hints or ENTITY_CACHE_TTLS say.'),
  ENTITY_CACHE_SHARED_SUBGRAPHS: names('catalog').describe('Subgraphs that answer every caller alike (comma-separated): their entries are shared when every selected field is PUBLIC and carries no authorization directive. Every other subgraph\'s entries are kept per caller (user and role; anonymous callers together).'),
  CACHE_INVALIDATION_KEY: z
    .string()
    .min(32, 'must be at least 32 characters')
    .optional()
    .describe('Key (32 characters or more) a caller presents in the `x-cache-invalidation-key` header to POST /cache/invalidate without an ADMIN token: how subgraph teams drop what both caches hold of data changed without a write through the gateway. Unset: administrators only.'),
  ENTITY_CACHE_MEMORY_ENTRIES: count(10_000).describe('Entity cache entries each gateway keeps in its own memory (the oldest dropped first unless read since last passed over), in front of Redis.'),
  ENTITY_CACHE_MEMORY_BYTES: count(32 * 1024 * 1024).describe('Bytes (approximately) of entity cache entries each gateway keeps in its own memory.'),

  // The MCP door for AI agents (mcp/, docs/mcp.md): the trusted documents as tools.
  MCP: z
    .enum(['off', 'on'])
    .default('off')
    .describe('on: an MCP server (Streamable HTTP, stateless) at MCP_PATH offers each operation of PERSISTED_QUERIES_MANIFEST as a tool, to bearer tokens whose scopes its fields allow; each call runs through /graphql like any request. off: MCP_PATH is 404.'),
  MCP_PATH: z
    .string()
    .regex(/^\/[A-Za-z0-9._~/-]*$/, 'must be a path starting with /')
    .refine((path) => !RESERVED_PATHS.includes(path), `must not be one of ${RESERVED_PATHS.join(', ')}`)
    .default('/mcp')
    .describe('Where the MCP server answers when MCP=on.'),
});

/** The settings every gateway knows; each SUBGRAPH_<NAME>_URL is read besides them (subgraphUrlVariables). */
export const gatewayEnvSchema = gatewayEnvSchemaFor([]);

const gatewayConfigSchemaFor = (subgraphUrls: readonly string[]) => gatewayEnvSchemaFor(subgraphUrls).superRefine((config, context) => {
  const longest = Math.max(config.SUBGRAPH_TIMEOUT_MS, ...Object.values(config.SUBGRAPH_TIMEOUTS));
  if (config.REQUEST_DEADLINE_MS <= longest) {
    context.addIssue({ code: 'custom', path: ['REQUEST_DEADLINE_MS'], message: 'must exceed every subgraph timeout' });
  }
  if (config.PERSISTED_QUERIES !== 'apq' && !config.PERSISTED_QUERIES_MANIFEST) {
    context.addIssue({ code: 'custom', path: ['PERSISTED_QUERIES_MANIFEST'], message: `must be set when PERSISTED_QUERIES=${config.PERSISTED_QUERIES}` });
  }
  if (config.MCP === 'on' && !config.PERSISTED_QUERIES_MANIFEST) {
    context.addIssue({ code: 'custom', path: ['PERSISTED_QUERIES_MANIFEST'], message: 'must be set when MCP=on (its operations are the tools)' });
  }
  const redis = redisSettingsProblem(config);
  if (redis) context.addIssue({ code: 'custom', path: [redis.path], message: redis.message });
});

/** zod keeps no pattern-named keys in its output type: the URL overrides are typed here. */
export type GatewayConfig = z.output<typeof gatewayEnvSchema> & { [variable: `SUBGRAPH_${string}_URL`]: string | undefined };

/** The gateway's settings from `env`, with every SUBGRAPH_<NAME>_URL it sets checked as a URL. */
export const loadGatewayConfig = (env: NodeJS.ProcessEnv = process.env): GatewayConfig =>
  loadConfig(gatewayConfigSchemaFor(subgraphUrlVariables(env)), env);

export const introspectionMode = (config: GatewayConfig): IntrospectionMode =>
  config.INTROSPECTION ?? (config.NODE_ENV === 'production' ? 'admin' : 'public');

export const upstreamSettings = (config: GatewayConfig): UpstreamSettings => ({
  timeoutMs: config.SUBGRAPH_TIMEOUT_MS,
  timeoutBySubgraph: config.SUBGRAPH_TIMEOUTS,
  retries: config.UPSTREAM_RETRIES,
  retryDelayMs: config.UPSTREAM_RETRY_DELAY_MS,
  breakerFailures: config.CIRCUIT_BREAKER_FAILURES,
  breakerResetMs: config.CIRCUIT_BREAKER_RESET_MS,
});

/** Routing URL overrides by subgraph name, from each subgraph's SUBGRAPH_<NAME>_URL; `subgraphs`: those of the served supergraph. */
export function subgraphUrlOverrides(config: GatewayConfig, subgraphs: readonly string[]): Record<string, string> {
  return Object.fromEntries(
    subgraphs.flatMap((name) => {
      const url = config[subgraphUrlVariable(name)];
      return url === undefined ? [] : [[name, url]];
    }),
  );
}

export const corsOrigins = (config: GatewayConfig): string[] => config.CORS_ORIGINS ?? (config.NODE_ENV === 'production' ? [] : ['*']);

export const graphiqlEnabled = (config: GatewayConfig): boolean => (config.GRAPHIQL ?? (config.NODE_ENV === 'production' ? 'off' : 'on')) === 'on';

/** Whether the errors `subgraph` answers without a code of ours keep their message (INCLUDE_SUBGRAPH_ERRORS). */
export function subgraphErrorInclusion(config: GatewayConfig): (subgraph: string) => boolean {
  const all = (config.INCLUDE_SUBGRAPH_ERRORS ?? (config.NODE_ENV === 'production' ? 'false' : 'true')) === 'true';
  const bySubgraph = new Map(Object.entries(config.INCLUDE_SUBGRAPH_ERRORS_BY_SUBGRAPH));
  return (subgraph) => bySubgraph.get(subgraph) ?? all;
}
