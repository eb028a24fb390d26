// The response cache for public responses: Yoga's response cache kept in Redis, so replicas share it, each response for
// the maxAge its Cache-Control header states, and checked on every read against the writes made since it was filled.
import { createHash } from 'node:crypto';
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';
import type { BuildResponseCacheKeyFunction } from '@envelop/response-cache';
import { useResponseCache, type Cache } from '@graphql-yoga/plugin-response-cache';
import type { Logger, Redis } from '@ordergraph/core';
import { isAsyncIterable, mapAsyncIterator } from '@graphql-tools/utils';
import { handleMaybePromise } from '@whatwg-node/promise-helpers';
import stableStringify from 'fast-json-stable-stringify';
import { Counter, type Registry } from 'prom-client';
import {
  Kind,
  getNamedType,
  getOperationAST,
  isAbstractType,
  isCompositeType,
  isListType,
  isNonNullType,
  isObjectType,
  isUnionType,
  visit,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLObjectType,
  type GraphQLOutputType,
  type GraphQLSchema,
  type NamedTypeNode,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import { isConnected } from '../shared/shared-state.js';
import { BoundedEntries, type EntityStore, type MemoryBounds } from './entity-store.js';
import { responseDependencies } from './generations.js';

// `m2:`: responses kept with their mark (Kept), never read by a version that kept bare results under the prefix alone
// (during a rolling upgrade both run side by side on one Redis).
const KEY_PREFIX = 'ordergraph:response:m2:';
/** The key of every request the cache neither reads nor fills. */
const UNCACHED = 'uncached';

/** Marks a type held in a response with no ID known (withMetadata): any write of the type drops that response. */
const UNIDENTIFIED = '#unidentified';

/**
 * A response as kept: the mark of the changes its request had read before it executed (`m`), the generations it
 * depends on (`d`), and the result (`v`). It is served only while no change read since names one of them.
 */
interface Kept {
  m: string;
  d: string[];
  v: ExecutionResult;
}

/** Where kept responses live: Redis, shared by the replicas, or this process alone. Never fails a request. */
interface KeptResponses {
  get(key: string): Promise<Kept | undefined>;
  set(key: string, kept: Kept, ttlMs: number): void;
}

function redisResponses(redis: Redis, logger: Logger): KeptResponses {
  const failed = (what: string) => (error: unknown) => {
    logger.warn({ err: error }, `response cache ${what} failed`);
    return undefined;
  };
  return {
    get: async (key) =>
      isConnected(redis)
        ? redis
            .get(KEY_PREFIX + key)
            .then((json) => (json ? (JSON.parse(json) as Kept) : undefined))
            .catch(failed('read'))
        : undefined,
    set(key, kept, ttlMs) {
      if (isConnected(redis)) redis.set(KEY_PREFIX + key, JSON.stringify(kept), 'PX', ttlMs).catch(failed('write'));
    },
  };
}

function memoryResponses(bounds: MemoryBounds): KeptResponses {
  const held = new BoundedEntries(bounds);
  return {
    get: async (key) => {
      const json = held.get(key, '', undefined);
      return json === undefined ? undefined : (JSON.parse(json) as Kept);
    },
    set: (key, kept, ttlMs) => held.set(key, '', undefined, JSON.stringify(kept), Date.now() + ttlMs),
  };
}

/**
 * The kept responses as the plugins read them. The first read of a request takes the mark of the changes (its read of
 * the stream of changes: entity-store.ts), so a response kept by a request whose mark predates a write this replica
 * has read since is a miss, wherever and whenever it was stored: a fill that read its subgraphs before a write and was
 * stored after it is never served to a request that began after the write's answer. A fill is kept with the mark its
 * request took before it executed. A mutation drops nothing here: its bump of the generations, before its answer
 * leaves (entity-cache.ts), is what every later read checks.
 *
 * The plugins call `get` and `set` without the request; `requestNow` names it, set around the (synchronous) calls
 * that reach them (useSharedResponseCache).
 */
function checkedResponses(
  kept: KeptResponses,
  generations: EntityStore,
  requestNow: () => object | undefined,
  schemaOf: () => GraphQLSchema | undefined,
  lookups: Counter<'result'>,
): Cache {
  const marks = new WeakMap<object, string | undefined>();
  // Yoga's plugin looks a request up as its parameters are read, and envelop's again as it executes: the second
  // lookup of a request that found nothing is answered here, without reading Redis again.
  const unanswered = new WeakMap<object, string>();
  return {
    async get(key) {
      const context = requestNow();
      if (!context || unanswered.get(context) === key) return undefined;
      let mark = marks.get(context);
      if (!marks.has(context)) marks.set(context, (mark = await generations.mark(context)));
      const found = mark === undefined ? undefined : await kept.get(key);
      const result = mark === undefined ? 'unavailable' : !found ? 'miss' : generations.unchangedSince(found.d, found.m) ? 'hit' : 'changed';
      lookups.inc({ result });
      if (result === 'hit') return found!.v;
      unanswered.set(context, key);
      return undefined;
    },
    set(key, result, entities, ttl) {
      const context = requestNow();
      const mark = context && marks.get(context);
      if (!context || mark === undefined || !(ttl > 0) || !Number.isFinite(ttl)) return;
      const held = [...entities].map(({ typename, id }) =>
        typename.endsWith(UNIDENTIFIED) ? { typename: typename.slice(0, -UNIDENTIFIED.length) } : { typename, id },
      );
      const roots = rootsRead.get(context);
      const dependencies = responseDependencies(schemaOf(), held, roots?.listed ?? [], roots?.values);
      kept.set(key, { m: mark, d: dependencies, v: result }, Math.ceil(ttl));
    },
    invalidate() {},
  };
}

export interface ResponseCacheOptions {
  redis: Redis | undefined;
  /** The generations and changes both caches check (entity-store.ts), bumped by every write. */
  generations: EntityStore;
  /** Responses this process keeps without Redis. */
  memory: MemoryBounds;
  logger: Logger;
  /** Where its lookups are counted (the gateway's /metrics). */
  registry: Registry;
  /** Whether this request may read or fill the cache (anonymous, not traced). */
  cacheable(request: Request, context: unknown): boolean;
  /** How long the request's response may be kept, in seconds: its cache policy (0: not at all). */
  maxAge(request: Request): number;
}

/** Headers a 304 repeats from the response it stands for (RFC 9110, section 15.4.5). */
const NOT_MODIFIED_HEADERS = ['cache-control', 'etag', 'last-modified', 'vary', 'age'];

/** A strong entity tag: the hash of the body, so that equal tags mean equal responses. */
const entityTag = (body: string) => `"${createHash('sha256').update(body).digest('base64url')}"`;

/** RFC 9110, section 13.1: If-None-Match decides (weak comparison); If-Modified-Since counts only without it. */
function notModified(request: Request, etag: string, lastModified: string | null): boolean {
  const ifNoneMatch = request.headers.get('if-none-match');
  if (ifNoneMatch !== null) return ifNoneMatch.split(',').some((tag) => [etag, `W/${etag}`, '*'].includes(tag.trim()));
  return lastModified !== null && Date.parse(lastModified) <= Date.parse(request.headers.get('if-modified-since') ?? '');
}

/**
 * Yoga's plugin answers a conditional request in onRequest, before any other plugin (so before the rate limit), to any
 * request naming any cached key (its ETag is the cache key, the same for every version of a response). Here the request
 * runs through every plugin, the cache answering it cheaply, and the response it gets is replaced with a 304 when the
 * client's copy is that very response: the tag is its body's hash.
 */
const answerConditionalRequest: GatewayPlugin['onResponse'] = async ({ request, response, setResponse }) => {
  // Yoga's plugin gives an ETag to exactly the responses it may cache.
  if (response.status !== 200 || !response.headers.has('etag')) return;
  const etag = entityTag(await response.clone().text());
  response.headers.set('etag', etag);
  if ((request.method !== 'GET' && request.method !== 'HEAD') || !notModified(request, etag, response.headers.get('last-modified'))) return;
  const headers = NOT_MODIFIED_HEADERS.flatMap((name) => {
    const value = response.headers.get(name);
    return value === null ? [] : [[name, value] as [string, string]];
  });
  setResponse(new Response(null, { status: 304, headers }));
};

/** The aliases under which @envelop/response-cache adds `__typename` and the ID to every selection set it executes. */
const CACHE_TYPENAME = '__responseCacheTypeName';
const CACHE_ID = '__responseCacheId';
/** The plugin's default `idFields`, the only one used here. */
const ID_FIELD = 'id';

const addedByCache = (field: FieldNode) =>
  (field.alias?.value === CACHE_TYPENAME && field.name.value === '__typename') || (field.alias?.value === CACHE_ID && field.name.value === ID_FIELD);

const clientDocuments = new WeakMap<DocumentNode, DocumentNode>();

/** The document without the fields the cache added: the client's own (the same object when it had none added). */
function clientDocument(document: DocumentNode): DocumentNode {
  let client = clientDocuments.get(document);
  if (!client) {
    client = visit(document, { Field: (field) => (addedByCache(field) ? null : undefined) });
    clientDocuments.set(document, client);
  }
  return client;
}

type Selections = readonly SelectionSetNode[];

/** A response key of a selection: the field it names, its type where the schema has it, and its sub-selections. */
interface CollectedField {
  name: string;
  type: GraphQLOutputType | undefined;
  selections: SelectionSetNode[];
}

/** Fields by response key, per schema, selections and runtime type ('' when unknown), so list items share one walk. */
const collectedFields = new WeakMap<GraphQLSchema, WeakMap<Selections, Map<string, Map<string, CollectedField>>>>();

/**
 * The fields the selections ask of an object of the runtime type (of every type they may meet when it is unknown,
 * every fragment applying). @skip and @include need no reading: a skipped field is absent from the result.
 */
function collectFields(
  schema: GraphQLSchema,
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
  selections: Selections,
  type: GraphQLCompositeType,
  runtime: GraphQLObjectType | undefined,
): Map<string, CollectedField> {
  let bySchema = collectedFields.get(schema);
  if (!bySchema) collectedFields.set(schema, (bySchema = new WeakMap()));
  let byRuntime = bySchema.get(selections);
  if (!byRuntime) bySchema.set(selections, (byRuntime = new Map()));
  const known = byRuntime.get(runtime?.name ?? '');
  if (known) return known;
  const fields = new Map<string, CollectedField>();
  const applies = (condition: NamedTypeNode | undefined) => {
    if (!condition || !runtime) return true;
    const named = schema.getType(condition.name.value);
    return named === runtime || (isAbstractType(named) && schema.isSubType(named, runtime));
  };
  const visitSet = (set: SelectionSetNode, scope: GraphQLCompositeType) => {
    for (const selection of set.selections) {
      if (selection.kind === Kind.FIELD) {
        const key = selection.alias?.value ?? selection.name.value;
        let field = fields.get(key);
        if (!field) fields.set(key, (field = { name: selection.name.value, type: undefined, selections: [] }));
        field.type ??= isUnionType(scope) ? undefined : scope.getFields()[selection.name.value]?.type;
        if (selection.selectionSet) field.selections.push(selection.selectionSet);
        continue;
      }
      const fragment = selection.kind === Kind.INLINE_FRAGMENT ? selection : fragments.get(selection.name.value);
      if (!fragment || !applies(fragment.typeCondition)) continue;
      const condition = fragment.typeCondition && schema.getType(fragment.typeCondition.name.value);
      visitSet(fragment.selectionSet, isCompositeType(condition) ? condition : scope);
    }
  };
  for (const set of selections) visitSet(set, runtime ?? type);
  byRuntime.set(runtime?.name ?? '', fields);
  return fields;
}

/** Where a deferred part lands: the type and selections of the object at its path, by the path as JSON. */
type Landings = Map<string, { type: GraphQLCompositeType; selections: Selections }>;

interface Walk {
  schema: GraphQLSchema;
  /** The operation's root type. */
  root: GraphQLObjectType;
  fragments: ReadonlyMap<string, FragmentDefinitionNode>;
  /** Kept only for an answer in parts. */
  landings: Landings | undefined;
}

const isIdValue = (value: unknown): value is string | number => (typeof value === 'string' && value !== '') || (typeof value === 'number' && value !== 0);

/** The ID given, as the plugin needs one, to an entity marked as held with no ID known. */
const NO_ID = '?';

/**
 * A copy of a result value with the cache's fields put back on every object, as the plugin expects to find them:
 * `__responseCacheTypeName`, the `__typename` the client selected, else the object type the schema says, else the
 * interface or union's name; `__responseCacheId`, the ID the client selected under any alias (without one, the type is
 * marked as held with no ID known). The plugin reads and removes both before anything is sent.
 */
function withMetadata(walk: Walk, value: unknown, type: GraphQLOutputType, selections: Selections, path: (string | number)[]): unknown {
  if (value === null || value === undefined) return value;
  if (isNonNullType(type)) return withMetadata(walk, value, type.ofType, selections, path);
  if (isListType(type)) {
    return Array.isArray(value) ? value.map((item, i) => withMetadata(walk, item, type.ofType, selections, walk.landings ? [...path, i] : path)) : value;
  }
  if (!isCompositeType(type) || typeof value !== 'object') return value;
  const data = value as Record<string, unknown>;
  let runtime = isObjectType(type) ? type : undefined;
  let fields = collectFields(walk.schema, walk.fragments, selections, type, runtime);
  if (!runtime) {
    const typenameKey = [...fields].find(([, field]) => field.name === '__typename')?.[0];
    const named = typenameKey === undefined ? undefined : walk.schema.getType(String(data[typenameKey]));
    if (isObjectType(named)) {
      runtime = named;
      fields = collectFields(walk.schema, walk.fragments, selections, type, runtime);
    }
  }
  walk.landings?.set(JSON.stringify(path), { type: runtime ?? type, selections });
  const copy: Record<string, unknown> = { ...data };
  let id: string | number | undefined;
  for (const [key, field] of fields) {
    if (!(key in data)) continue;
    if (field.name === ID_FIELD && isIdValue(data[key])) id = data[key] as string | number;
    if (field.type) copy[key] = withMetadata(walk, data[key], field.type, field.selections, walk.landings ? [...path, key] : path);
  }
  const typename = runtime?.name ?? type.name;
  // The plugin passes on only entities with an ID, and without __responseCacheId it takes one from any key `id`: an
  // object with no ID known is marked as such, under a placeholder. The root is no entity: left to the plugin as is.
  if (runtime === walk.root) copy[CACHE_TYPENAME] = typename;
  else if (id === undefined) Object.assign(copy, { [CACHE_TYPENAME]: typename + UNIDENTIFIED, [CACHE_ID]: NO_ID });
  else Object.assign(copy, { [CACHE_TYPENAME]: typename, [CACHE_ID]: id });
  return copy;
}

type Incremental = ExecutionResult & { incremental?: readonly { data?: unknown; path?: readonly (string | number)[] }[] };

type Execute = (args: ExecutionArgs) => unknown;

/**
 * @envelop/response-cache adds `__responseCacheTypeName: __typename` to every selection set, and
 * `__responseCacheId: id` to every one whose type has an `id`, to find the entities of a result (a mutation's to
 * invalidate, a query's to index). Executed, that changes the plan: an `id` only another subgraph resolves adds a
 * fetch that can fail and null the entity, a @provides shortcut is lost, a root `__typename` becomes a subgraph call
 * of its own. The plugin's executor is given one that executes the client's own document and puts the cache's fields
 * back into the result, from the client's selections and the schema, so the subgraphs are asked exactly what the
 * client asked.
 */
const executingClientDocument =
  (execute: Execute): Execute =>
  (args) => {
    const document = clientDocument(args.document);
    if (document === args.document) return execute(args);
    const operation = getOperationAST(document, args.operationName);
    const root = operation && args.schema.getRootType(operation.operation);
    if (!operation || !root) return execute({ ...args, document });
    const fragments = new Map(
      document.definitions.flatMap((definition) => (definition.kind === Kind.FRAGMENT_DEFINITION ? [[definition.name.value, definition] as const] : [])),
    );
    const rootSelections = rootSelectionsOf(operation);
    const context = args.contextValue;
    return handleMaybePromise(
      () => execute({ ...args, document }),
      (result) => {
        if (!isAsyncIterable<Incremental>(result)) {
          const single = result as ExecutionResult;
          if (context && typeof context === 'object') rootsRead.set(context, rootListings(args.schema, root, operation, fragments, single.data));
          return single.data ? { ...single, data: withMetadata({ schema: args.schema, root, fragments, landings: undefined }, single.data, root, rootSelections, []) } : single;
        }
        // An answer in parts (@defer): each part lands on an object an earlier part delivered. Its root fields' lists
        // count whatever they found (the parts come later).
        if (context && typeof context === 'object') rootsRead.set(context, rootListings(args.schema, root, operation, fragments, undefined));
        const walk: Walk = { schema: args.schema, root, fragments, landings: new Map() };
        return mapAsyncIterator(result, (part) => {
          const data = part.data ? withMetadata(walk, part.data, root, rootSelections, []) : part.data;
          const incremental = part.incremental?.map((patch) => {
            const landing = patch.path && patch.data ? walk.landings!.get(JSON.stringify(patch.path)) : undefined;
            return landing ? { ...patch, data: withMetadata(walk, patch.data, landing.type, landing.selections, [...patch.path!]) } : patch;
          });
          return { ...part, ...(part.data ? { data } : {}), ...(incremental ? { incremental } : {}) };
        });
      },
    );
  };

const rootSelectionsByOperation = new WeakMap<OperationDefinitionNode, Selections>();
/** One array per operation, so the fields collected for it are found again. */
function rootSelectionsOf(operation: OperationDefinitionNode): Selections {
  let selections = rootSelectionsByOperation.get(operation);
  if (!selections) rootSelectionsByOperation.set(operation, (selections = [operation.selectionSet]));
  return selections;
}

/**
 * The key upstream's defaultBuildResponseCacheKey gives (a hex SHA-256 of the document, operation name, variables and
 * session), so replicas of either build share entries; hashed here at once, where upstream hands it to WebCrypto's
 * asynchronous digest: a job on libuv's thread pool and a promise for every cacheable request, 3 % of the gateway's
 * busy CPU under the benchmark's mixed workload.
 */
export const responseCacheKey: BuildResponseCacheKeyFunction = (params) =>
  createHash('sha256')
    .update([params.documentString, params.operationName ?? '', stableStringify(params.variableValues ?? {}), params.sessionId ?? ''].join('|'))
    .digest('hex');

/**
 * What a response's root fields read (by context): the types whose lists they show, every root field's but one that
 * names the entity it returns by its `id` argument and found it (its entity's own generation covers it); and whether
 * one answers no object (`values`: a scalar or an enum, which no write names).
 */
const rootsRead = new WeakMap<object, { listed: string[]; values: boolean }>();

function rootListings(schema: GraphQLSchema, root: GraphQLObjectType, operation: OperationDefinitionNode, fragments: ReadonlyMap<string, FragmentDefinitionNode>, data: unknown): { listed: string[]; values: boolean } {
  const read = { listed: [] as string[], values: false };
  const answers = (data ?? {}) as Record<string, unknown>;
  for (const [key, field] of collectFields(schema, fragments, rootSelectionsOf(operation), root, root)) {
    const definition = root.getFields()[field.name];
    if (!definition) continue;
    if (!isCompositeType(getNamedType(definition.type))) {
      read.values = true;
      continue;
    }
    const unwrapped = isNonNullType(definition.type) ? definition.type.ofType : definition.type;
    const byId = !isListType(unwrapped) && definition.args.some((argument) => argument.name === ID_FIELD);
    if (!byId || answers[key] === null || answers[key] === undefined) read.listed.push(getNamedType(definition.type).name);
  }
  return read;
}

// Only anonymous queries are cached, each response with the mark of the changes read before it executed and the
// generations it depends on; it is served only while this replica has read no change of them since (requestView).
// Conditional GETs (If-None-Match, If-Modified-Since) are answered 304 at the very end, once every other plugin, the
// rate limit first, has run.
export function useSharedResponseCache(options: ResponseCacheOptions): GatewayPlugin {
  let schema: GraphQLSchema | undefined;
  const kept = options.redis ? redisResponses(options.redis, options.logger) : memoryResponses(options.memory);
  const lookups = new Counter({
    name: 'gateway_response_cache_lookups_total',
    help: 'Response cache lookups of anonymous queries: hit, miss, changed (kept, but a write since changed what it holds), unavailable (Redis away)',
    labelNames: ['result'] as const,
    registers: [options.registry],
  });
  // The request whose (synchronous) plugin hook is running: the plugins' reads and writes of the cache start within one.
  let current: object | undefined;
  const within = <T>(context: unknown, run: () => T): T => {
    const outer = current;
    current = context && typeof context === 'object' ? context : undefined;
    try {
      return run();
    } finally {
      current = outer;
    }
  };
  const { onRequest: _answeredTooEarly, onParams, ...cache } = useResponseCache({
    cache: checkedResponses(kept, options.generations, () => current, () => schema, lookups),
    // Everyone shares one public cache; authenticated queries never reach it (enabled below).
    session: () => null,
    // Mutations are left alone: their bump of the generations is what drops what they changed.
    enabled: (request, context) => options.cacheable(request, context),
    buildResponseCacheKey: (params) => (options.cacheable(params.request, params.context) ? responseCacheKey(params) : UNCACHED),
    // The TTL is the request's cache policy, the one its Cache-Control header states (cache-control.ts).
    // Called just before the plugin keeps a result: `current` stays set for its `set`.
    onTtl: ({ context }) => {
      current = context && typeof context === 'object' ? context : undefined;
      return options.maxAge((context as { request: Request }).request) * 1000;
    },
    includeExtensionMetadata: false,
  });
  // The envelop plugin, which yoga's adds at init, executes through executingClientDocument.
  const onPluginInit: NonNullable<typeof cache.onPluginInit> = (payload) =>
    cache.onPluginInit!({
      ...payload,
      addPlugin: (plugin) =>
        payload.addPlugin(
          plugin.onExecute
            ? {
                ...plugin,
                onExecute: (params) =>
                  within(params.args.contextValue, () =>
                    plugin.onExecute!({ ...params, executeFn: executingClientDocument(params.executeFn as Execute) as typeof params.executeFn }),
                  ),
              }
            : plugin,
        ),
    });
  const onSchemaChange: GatewayPlugin['onSchemaChange'] = (payload) => {
    schema = payload.schema;
  };
  return {
    ...cache,
    onPluginInit,
    onParams: (payload: Parameters<NonNullable<typeof onParams>>[0]) => within(payload.context, () => onParams!(payload)),
    onSchemaChange,
    onResponse: answerConditionalRequest,
  } as unknown as GatewayPlugin;
}
