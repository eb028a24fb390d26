// The response cache for public responses: Yoga's response cache kept in Redis, so replicas share it, each response for
// the maxAge its Cache-Control header states.
import { createHash } from 'node:crypto';
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';
import type { BuildResponseCacheKeyFunction, CacheEntityRecord } from '@envelop/response-cache';
import { createInMemoryCache, useResponseCache, type Cache } from '@graphql-yoga/plugin-response-cache';
import type { Logger, Redis } from '@ordergraph/core';
import { isAsyncIterable, mapAsyncIterator } from '@graphql-tools/utils';
import { handleMaybePromise } from '@whatwg-node/promise-helpers';
import stableStringify from 'fast-json-stable-stringify';
import {
  Kind,
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
import { isConnected } from '../server/shared-state.js';

const KEY_PREFIX = 'ordergraph:response:';
/** The key of every request the cache neither reads nor fills. */
const UNCACHED = 'uncached';

/**
 * The index of responses by entity: `entity:<Type>` holds every response holding a Type, `entity:<Type>:<id>` those
 * holding that one. An entity given without an ID drops the first, with one the second (the in-memory cache's rules).
 */
const indexKeys = ({ typename, id }: CacheEntityRecord, invalidating: boolean) => {
  const identified = id !== undefined && id !== null;
  const typeKey = `${KEY_PREFIX}entity:${typename}`;
  if (invalidating) return [identified ? `${typeKey}:${id}` : typeKey];
  return identified ? [typeKey, `${typeKey}:${id}`] : [typeKey];
};
const allIndexKeys = (entities: Iterable<CacheEntityRecord>, invalidating: boolean) => [...new Set([...entities].flatMap((entity) => indexKeys(entity, invalidating)))];

/**
 * Written here rather than taken from @envelop/response-cache-redis, whose entity index sets never expire and whose
 * keys carry no prefix. Each response is stored with its TTL; the set that indexes responses by entity expires with
 * the longest-lived response in it. A Redis failure is a cache miss, never a failed request.
 */
function redisResponseCache(redis: Redis, logger: Logger): Cache {
  const failed = (what: string) => (error: unknown) => {
    logger.warn({ err: error }, `response cache ${what} failed`);
    return undefined;
  };
  return {
    get: async (id) =>
      isConnected(redis)
        ? redis
            .get(KEY_PREFIX + id)
            .then((json) => (json ? JSON.parse(json) : undefined))
            .catch(failed('read'))
        : undefined,
    // Every command names one key (or keys of one index set), so each works in a Redis Cluster, where keys of
    // different slots cannot share a command or a transaction. The index is written before the response it indexes:
    // a response is never stored where an invalidation could miss it.
    async set(id, result, entities, ttl) {
      if (!(ttl > 0) || !Number.isFinite(ttl) || !isConnected(redis)) return;
      const px = Math.ceil(ttl);
      try {
        await Promise.all(allIndexKeys(entities, false).map((key) => redis.multi().sadd(key, id).pexpire(key, px, 'NX').pexpire(key, px, 'GT').exec()));
        await redis.set(KEY_PREFIX + id, JSON.stringify(result), 'PX', px);
      } catch (error) {
        failed('write')(error);
      }
    },
    // Only the members read leave an index set: a response indexed meanwhile stays where the next invalidation finds it.
    async invalidate(entities) {
      if (!isConnected(redis)) return;
      try {
        const keys = allIndexKeys(entities, true);
        const members = await Promise.all(keys.map((key) => redis.smembers(key)));
        await Promise.all([
          ...members.flat().map((id) => redis.del(KEY_PREFIX + id)),
          ...keys.flatMap((key, i) => (members[i]!.length > 0 ? [redis.srem(key, ...members[i]!)] : [])),
        ]);
      } catch (error) {
        failed('invalidation')(error);
      }
    },
  };
}

/** Marks a type held in a response with no ID known: every invalidation of the type drops that response. */
const UNIDENTIFIED = '#unidentified';

/**
 * The entity index's rules over either store. Entities come from results read without the cache's own fields, so an
 * entity may be known only by an interface or union (expanded to every object type that may stand there) and may have
 * no ID: a response holding `Type` with no ID is dropped by any invalidation of `Type`, and a mutation returning `Type`
 * with no ID drops every response holding `Type`. Root types are no entities; scalars and enums (the plugin infers a
 * null field's type) hold none. Over-invalidation is the price of never serving a stale entity.
 */
export function indexingEntities(cache: Cache, schemaOf: () => GraphQLSchema | undefined): Cache {
  const objectTypes = (typename: string): string[] => {
    const schema = schemaOf();
    const type = schema?.getType(typename);
    if (!schema || !type) return [typename];
    if ([schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()].includes(type as GraphQLObjectType)) return [];
    if (isObjectType(type)) return [typename];
    return isAbstractType(type) ? schema.getPossibleTypes(type).map(({ name }) => name) : [];
  };
  const expand = (entities: Iterable<CacheEntityRecord>, invalidating: boolean): CacheEntityRecord[] =>
    [...entities].flatMap(({ typename, id }) => {
      const marked = typename.endsWith(UNIDENTIFIED);
      const identified = !marked && id !== undefined && id !== null;
      return objectTypes(marked ? typename.slice(0, -UNIDENTIFIED.length) : typename).flatMap((type): CacheEntityRecord[] => {
        if (identified) return invalidating ? [{ typename: type, id }, { typename: type + UNIDENTIFIED }] : [{ typename: type, id }];
        return invalidating ? [{ typename: type }] : [{ typename: type }, { typename: type + UNIDENTIFIED }];
      });
    });
  return {
    get: (id) => cache.get(id),
    set: (id, result, entities, ttl) => cache.set(id, result, expand(entities, false), ttl),
    invalidate: (entities) => cache.invalidate(expand(entities, true)),
  };
}

export interface ResponseCacheOptions {
  redis: Redis | undefined;
  logger: Logger;
  /** Whether this request may read or fill the cache (anonymous, not traced). Mutations always invalidate. */
  cacheable(request: Request, context: unknown): boolean;
  /** Whether the request's operation is a mutation. */
  mutates(context: unknown): boolean;
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
    return handleMaybePromise(
      () => execute({ ...args, document }),
      (result) => {
        if (!isAsyncIterable<Incremental>(result)) {
          const single = result as ExecutionResult;
          return single.data ? { ...single, data: withMetadata({ schema: args.schema, root, fragments, landings: undefined }, single.data, root, rootSelections, []) } : single;
        }
        // An answer in parts (@defer): each part lands on an object an earlier part delivered.
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

// Only anonymous queries are cached; a mutation through any replica drops the cached responses that contain the
// entities it returns (Product:<id> after updateProduct), and every entry expires with its hint in any case.
// Conditional GETs (If-None-Match, If-Modified-Since) are answered 304 at the very end, once every other plugin, the
// rate limit first, has run.
export function useSharedResponseCache(options: ResponseCacheOptions): GatewayPlugin {
  let schema: GraphQLSchema | undefined;
  const store = indexingEntities(options.redis ? redisResponseCache(options.redis, options.logger) : createInMemoryCache(), () => schema);
  // The plugin starts a mutation's invalidation and does not wait for it: responses wait here (onResponse) for those
  // started, so that no read after a write's answer, through any replica, finds what the write changed.
  const invalidations = new Set<Promise<void>>();
  const invalidate: Cache['invalidate'] = (entities) => {
    const done: Promise<void> = Promise.resolve(store.invalidate(entities)).finally(() => invalidations.delete(done));
    invalidations.add(done);
    return done;
  };
  const { onRequest: _answeredTooEarly, ...cache } = useResponseCache({
    cache: { ...store, invalidate },
    // Everyone shares one public cache; authenticated queries never reach it (enabled below).
    session: () => null,
    enabled: (request, context) => options.cacheable(request, context) || options.mutates(context),
    // Those the cache cannot serve (a mutation only invalidates) need no key.
    buildResponseCacheKey: (params) => (options.cacheable(params.request, params.context) ? responseCacheKey(params) : UNCACHED),
    // The TTL is the request's cache policy, the one its Cache-Control header states (cache-control.ts).
    onTtl: ({ context }) => options.maxAge((context as { request: Request }).request) * 1000,
    includeExtensionMetadata: false,
  });
  // The envelop plugin, which yoga's adds at init, executes through executingClientDocument.
  const onPluginInit: NonNullable<typeof cache.onPluginInit> = (payload) =>
    cache.onPluginInit!({
      ...payload,
      addPlugin: (plugin) =>
        payload.addPlugin(
          plugin.onExecute
            ? { ...plugin, onExecute: (params) => plugin.onExecute!({ ...params, executeFn: executingClientDocument(params.executeFn as Execute) as typeof params.executeFn }) }
            : plugin,
        ),
    });
  const onSchemaChange: GatewayPlugin['onSchemaChange'] = (payload) => {
    schema = payload.schema;
  };
  const onResponse: GatewayPlugin['onResponse'] = async (payload) => {
    if (invalidations.size > 0) await Promise.all(invalidations);
    await answerConditionalRequest!(payload);
  };
  return { ...cache, onPluginInit, onSchemaChange, onResponse } as GatewayPlugin;
}
