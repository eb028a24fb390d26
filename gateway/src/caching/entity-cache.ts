// The entity cache (ENTITY_CACHE=on): subgraph answers kept per entity (`_entities` fetches, one entry per
// representation) and per cacheable root-field fetch, shared by the replicas through Redis (entity-store.ts), dropped
// by the writes that change them before their responses leave, and by an administrator's purge.
import { createHash } from 'node:crypto';
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';
import { isAsyncIterable, mapAsyncIterator, type ExecutionRequest, type Executor } from '@graphql-tools/utils';
import { ErrorCode, invalidationsIn, setSpanAttributes, type Invalidation, type Logger } from '@ordergraph/core';
import {
  GraphQLError,
  Kind,
  getNamedType,
  getOperationAST,
  isAbstractType,
  isCompositeType,
  isListType,
  isNonNullType,
  isObjectType,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  type FragmentDefinitionNode,
  type GraphQLNamedType,
  type GraphQLOutputType,
  type GraphQLSchema,
  type SelectionSetNode,
} from 'graphql';
import { Counter, type Registry } from 'prom-client';
import { cacheHints } from './cache-control.js';
import type { Dependencies, EntityStore, StoredEntry } from './entity-store.js';
import { VALUES_GENERATION, entityGeneration, possibleObjectTypes, purgeGeneration, rootGeneration, typeGeneration } from './generations.js';
import { entityKeys, fetchShape, graphValue, subgraphTypes, type FetchPolicy, type FetchShape, type PolicySettings, type ServedSchema } from './fetch-policy.js';
import { printedOnce, viewerOf } from '../execution/operation.js';
import { errorResponse } from '../security/errors.js';
import { CACHE_INVALIDATION_PATH, LEGACY_PURGE_PATH, parseInvalidations, refusal } from './invalidation-endpoint.js';

/** An administrator's request with this header set to `bypass` neither reads nor fills the entity cache. */
export const ENTITY_CACHE_BYPASS_HEADER = 'x-entity-cache';

export interface EntityCacheOptions extends PolicySettings {
  store: EntityStore;
  /**
   * Which query fetches are kept: `on` every cacheable one (per caller where not shared), `public` those shared by
   * every caller only, `off` none. Writes bump their generations whatever it says (the response cache checks them).
   */
  fetches: 'off' | 'public' | 'on';
  /** The key subgraph teams invalidate with (invalidation-endpoint.ts); unset: administrators only. */
  invalidationKey: string | undefined;
  logger: Logger;
  registry: Registry;
  /** Signs a subgraph request again once narrowed to the representations not held (subgraphs/upstream.ts). */
  sign: ((request: ExecutionRequest) => ExecutionRequest) | undefined;
}

/** The prefix of the aliases under which the response cache adds `__typename` and `id` to a mutation it executes. */
const RESPONSE_CACHE_ALIAS = '__responseCache';

/** The span of a subgraph call, where Hive's OpenTelemetry plugin traces it (its context extension). */
interface TracedContext {
  openTelemetry?: { getExecutionRequestContext?(request: ExecutionRequest): unknown };
}
const markSpan = (request: ExecutionRequest, hits: number, misses: number) =>
  setSpanAttributes((request.context as TracedContext | undefined)?.openTelemetry?.getExecutionRequestContext?.(request), {
    'ordergraph.entity_cache.hits': hits,
    'ordergraph.entity_cache.misses': misses,
  });

const hash = (...parts: string[]) => createHash('sha256').update(parts.join('\u0000')).digest('base64url');

/**
 * Who may read an entry, as it stands in the entry's key: `public`, or the caller as a JSON string (which starts with a
 * quote, so never reads `public`).
 */
const PUBLIC_READER = 'public';

type Result = ExecutionResult<Record<string, unknown>>;
type Representation = Record<string, unknown> & { __typename?: unknown; id?: unknown };

/** An error of the narrowed fetch, at the place its representation has in the fetch the planner made. */
function movedError(error: GraphQLError, positions: readonly number[]): GraphQLError {
  const path = error.path;
  if (!path || path[0] !== '_entities' || typeof path[1] !== 'number') return error;
  const moved = [path[0], positions[path[1]] ?? path[1], ...path.slice(2)];
  return new GraphQLError(error.message, { nodes: error.nodes, source: error.source, positions: error.positions, path: moved, originalError: error.originalError, extensions: error.extensions });
}

/** The `_entities` positions the errors name; undefined when an error names none (then no answer is kept). */
function erroredPositions(errors: readonly GraphQLError[] | undefined): Set<number> | undefined {
  const positions = new Set<number>();
  for (const error of errors ?? []) {
    if (error.path?.[0] !== '_entities' || typeof error.path[1] !== 'number') return undefined;
    positions.add(error.path[1]);
  }
  return positions;
}

interface Written {
  entities: Map<string, Set<string>>;
  /** Types written with no ID known: every entry of the type goes. */
  types: Set<string>;
  /**
   * Read from a result: some root field's answer names no object (a scalar, an enum, a null), so what its write changed
   * cannot be read from it.
   */
  unnamed?: boolean;
}

/**
 * The entities a mutation's result holds, by type and ID (alias-aware: the ID and `__typename` as the client selected
 * them). An object whose ID was not selected, or whose type cannot be told, drops its whole type (every type that may
 * stand there); a root field that failed drops every type it returns.
 */
function writtenEntities(schema: GraphQLSchema, document: DocumentNode, operationName: string | null | undefined, result: ExecutionResult): Written {
  const written: Written = { entities: new Map(), types: new Set() };
  const operation = getOperationAST(document, operationName);
  const root = operation && schema.getRootType(operation.operation);
  if (!operation || !root) return written;
  const fragments = new Map<string, FragmentDefinitionNode>(
    document.definitions.flatMap((definition) => (definition.kind === Kind.FRAGMENT_DEFINITION ? [[definition.name.value, definition] as const] : [])),
  );
  const allOf = (type: GraphQLNamedType) => possibleObjectTypes(schema, type);
  /** Response keys of the selections for an object of `type`: field name and sub-selections. */
  const fieldsOf = (sets: readonly SelectionSetNode[], type: GraphQLNamedType) => {
    const fields = new Map<string, { name: string; sets: SelectionSetNode[] }>();
    const visit = (set: SelectionSetNode) => {
      for (const selection of set.selections) {
        if (selection.kind === Kind.FIELD) {
          // The response cache's own fields (response-cache.ts), where it runs first, say nothing of the client's.
          if (selection.alias?.value.startsWith(RESPONSE_CACHE_ALIAS)) continue;
          const key = selection.alias?.value ?? selection.name.value;
          const field = fields.get(key) ?? { name: selection.name.value, sets: [] };
          if (selection.selectionSet) field.sets.push(selection.selectionSet);
          fields.set(key, field);
          continue;
        }
        const fragment = selection.kind === Kind.INLINE_FRAGMENT ? selection : fragments.get(selection.name.value);
        const condition = fragment?.typeCondition && schema.getType(fragment.typeCondition.name.value);
        if (fragment && (!condition || condition === type || (isAbstractType(condition) && isObjectType(type) && schema.isSubType(condition, type)))) visit(fragment.selectionSet);
      }
    };
    sets.forEach(visit);
    return fields;
  };
  const visitValue = (value: unknown, type: GraphQLOutputType, sets: readonly SelectionSetNode[]): void => {
    if (value === null || value === undefined) return;
    if (isNonNullType(type)) return visitValue(value, type.ofType, sets);
    if (isListType(type)) {
      if (Array.isArray(value)) for (const item of value) visitValue(item, type.ofType, sets);
      return;
    }
    if (!isCompositeType(type) || typeof value !== 'object') return;
    const data = value as Record<string, unknown>;
    let runtime: GraphQLNamedType | undefined = isObjectType(type) ? type : undefined;
    if (!runtime) {
      const typenameKey = [...fieldsOf(sets, type)].find(([, field]) => field.name === '__typename')?.[0];
      const named = typenameKey === undefined ? undefined : schema.getType(String(data[typenameKey]));
      if (isObjectType(named)) runtime = named;
    }
    if (!runtime || !isObjectType(runtime)) {
      for (const name of allOf(type)) written.types.add(name);
      return;
    }
    const fields = fieldsOf(sets, runtime);
    const idKey = [...fields].find(([, field]) => field.name === 'id')?.[0];
    const id = idKey === undefined ? undefined : data[idKey];
    if (typeof id === 'string' || typeof id === 'number') {
      const ids = written.entities.get(runtime.name) ?? new Set<string>();
      written.entities.set(runtime.name, ids.add(String(id)));
    } else if (runtime !== root) {
      written.types.add(runtime.name);
    }
    const fieldMap = runtime.getFields();
    for (const [key, field] of fields) {
      const definition = fieldMap[field.name];
      if (definition && field.sets.length > 0) visitValue(data[key], definition.type, field.sets);
    }
  };
  const data = result.data as Record<string, unknown> | null | undefined;
  const failed = (result.errors?.length ?? 0) > 0;
  const rootFields = root.getFields();
  for (const [key, field] of fieldsOf([operation.selectionSet], root)) {
    const definition = rootFields[field.name];
    if (!definition) continue;
    const value = data?.[key];
    // A failed root field may have committed before it failed: its types go whole.
    if (failed && (value === null || value === undefined)) for (const name of allOf(getNamedType(definition.type))) written.types.add(name);
    if (value === null || value === undefined || !isCompositeType(getNamedType(definition.type))) written.unnamed = true;
    visitValue(value, definition.type, field.sets);
  }
  return written;
}

/** Every object type the operation's root fields may return, as written with no ID known. */
function returnedTypes({ schema, document, operationName }: ExecutionArgs): Written {
  const written: Written = { entities: new Map(), types: new Set() };
  const operation = getOperationAST(document, operationName);
  const fields = operation ? schema.getRootType(operation.operation)?.getFields() : undefined;
  for (const selection of operation?.selectionSet.selections ?? []) {
    const returned = selection.kind === Kind.FIELD ? fields?.[selection.name.value]?.type : undefined;
    const named = returned && getNamedType(returned);
    if (named && isObjectType(named)) written.types.add(named.name);
    else if (named && isAbstractType(named)) for (const type of schema.getPossibleTypes(named)) written.types.add(type.name);
    else if (named) written.unnamed = true;
  }
  return written;
}

/** What the subgraphs declared their writes changed (@ordergraph/core's invalidation.ts), as written entities and types. */
function declaredWrites(declared: readonly Invalidation[]): Written {
  const written: Written = { entities: new Map(), types: new Set() };
  for (const item of declared) {
    const id = item.kind === 'entity' && Object.keys(item.key).length === 1 ? item.key['id'] : undefined;
    if (typeof id === 'string' || typeof id === 'number') written.entities.set(item.type, (written.entities.get(item.type) ?? new Set()).add(String(id)));
    // Every entity of the type, or one named by a key the generations do not follow (not `id` alone).
    else written.types.add(item.type);
  }
  return written;
}

/**
 * The generations a write bumps; `declared`: its subgraphs named every entity whose fields or lists it changed. Every
 * write sets VALUES_GENERATION: what root fields answer without naming an object may have changed with any of them.
 */
const generationsOf = (written: Written, declared: boolean): string[] => [
  VALUES_GENERATION,
  ...[...written.entities].flatMap(([type, ids]) => [
    rootGeneration(type),
    ...(declared ? [] : [typeGeneration(type)]),
    ...[...ids].map((id) => entityGeneration(type, id)),
  ]),
  ...[...written.types].flatMap((type) => [typeGeneration(type), purgeGeneration(type), rootGeneration(type)]),
];

/** A mutation's subgraph fetches so far: how many, and what those that declared their invalidations declared. */
interface MutationFetches {
  fetches: number;
  undeclared: number;
  /** The subgraphs of the fetches that declared nothing. */
  undeclaredSubgraphs: Set<string>;
  declared: Invalidation[];
}

export interface EntityCache {
  plugin: GatewayPlugin;
}

/**
 * Hooks around each subgraph call (placed after every other plugin that wraps the executor, so a hit meets no timeout,
 * retry, breaker or subgraph at all) and around each mutation's execution (its entities' generations bumped before
 * its result goes on). Entries are keyed by subgraph, the fetch's document and other variables, the representation
 * (or the root fetch's variables) and who may read them: `public` when the policy is shared, else the viewer (ID and
 * role), `anonymous` for callers without a token.
 */
export function createEntityCache(options: EntityCacheOptions): EntityCache {
  const { store, logger } = options;
  let served: (ServedSchema & { shapes: WeakMap<DocumentNode, Map<string, FetchShape>>; types: ReadonlyMap<string, readonly string[]> }) | undefined;
  // Per request context: what its mutation's subgraph fetches declared, read once the mutation's result is in.
  const mutationFetches = new WeakMap<object, MutationFetches>();
  const lookups = new Counter({
    name: 'gateway_entity_cache_lookups_total',
    help: 'Entity cache lookups by subgraph and type (Query for root-field fetches): hit, miss, bypass (an administrator asked), unavailable (Redis away)',
    labelNames: ['subgraph', 'type', 'result'],
    registers: [options.registry],
  });
  /**
   * Counts a fetch's lookups, of entities of `types`, the nth with `resultOf(n)`: one increment per type and result, as
   * prom-client hashes the labels on every one.
   */
  const countLookups = (subgraph: string, types: readonly string[], resultOf: (n: number) => string) => {
    const counts = new Map<string, Map<string, number>>();
    types.forEach((type, n) => {
      const result = resultOf(n);
      let byType = counts.get(result);
      if (!byType) counts.set(result, (byType = new Map()));
      byType.set(type, (byType.get(type) ?? 0) + 1);
    });
    for (const [result, byType] of counts) for (const [type, count] of byType) lookups.inc({ subgraph, type, result }, count);
  };
  const invalidations = new Counter({
    name: 'gateway_entity_cache_invalidations_total',
    help: "Entity cache invalidations: by what a mutation's subgraphs declared it changed, by a mutation's result (nothing declared), or by a purge; done or failed",
    labelNames: ['cause', 'result'],
    registers: [options.registry],
  });

  const shapeOf = (document: DocumentNode, subgraph: string): FetchShape => {
    if (!served || options.fetches === 'off') return { kind: 'uncached' };
    let bySubgraph = served.shapes.get(document);
    if (!bySubgraph) served.shapes.set(document, (bySubgraph = new Map()));
    let shape = bySubgraph.get(subgraph);
    if (!shape) bySubgraph.set(subgraph, (shape = keptFetches(fetchShape(served, document, subgraph, options))));
    return shape;
  };
  /** A fetch's shape with what the setting does not keep left out. */
  const keptFetches = (shape: FetchShape): FetchShape => {
    if (options.fetches === 'on' || shape.kind === 'uncached') return shape;
    if (shape.kind === 'root') return shape.policy.shared ? shape : { kind: 'uncached' };
    const policies = new Map([...shape.policies].filter(([, policy]) => policy.shared));
    return policies.size > 0 ? { kind: 'entities', policies } : { kind: 'uncached' };
  };

  const bump = async (generations: string[], cause: 'mutation' | 'declared' | 'purge') => {
    try {
      await store.bump(generations);
      invalidations.inc({ cause, result: 'ok' });
    } catch (error) {
      invalidations.inc({ cause, result: 'failed' });
      throw error;
    }
  };

  /**
   * Who may read what this request's fetch keeps, as a JSON string (its part of an entry's key), once per request:
   * undefined when it must neither read nor keep anything.
   */
  const callers = new WeakMap<object, string | undefined>();
  const callerOf = (request: ExecutionRequest): string | undefined => {
    const context = request.context as { request?: Request } | undefined;
    if (!context) return undefined;
    if (callers.has(context)) return callers.get(context);
    const viewer = viewerOf(context);
    const bypass = viewer?.role === 'ADMIN' && context.request?.headers.get(ENTITY_CACHE_BYPASS_HEADER) === 'bypass';
    const caller = bypass ? undefined : JSON.stringify(viewer ? `user:${viewer.userId}:${viewer.role}` : 'anonymous');
    callers.set(context, caller);
    return caller;
  };

  /**
   * A fetch's part of its entries' keys: the digest of its subgraph and document (once per document), then its other
   * variables as JSON. JSON holds no NUL character (it writes U+0000 as an escape), so the NULs between the parts
   * cannot be forged by a variable's value, nor by a caller's.
   */
  const documentDigests = new WeakMap<DocumentNode, Map<string, string>>();
  const fetchKeyOf = (subgraph: string, document: DocumentNode, variables: string) => {
    let bySubgraph = documentDigests.get(document);
    if (!bySubgraph) documentDigests.set(document, (bySubgraph = new Map()));
    let digest = bySubgraph.get(subgraph);
    if (digest === undefined) bySubgraph.set(subgraph, (digest = hash(subgraph, printedOnce(document))));
    return `${digest}\u0000${variables}`;
  };

  // What every entity of a type depends on but its own generation, one array for all of them (entity-store.ts).
  // (An entity without an ID depends on nothing of its own: its dependencies are the same object for all of them.)
  const sharedDependencies = new WeakMap<FetchPolicy, { withId: string[]; withoutId: Dependencies }>();
  const sharedDependenciesOf = (type: string, policy: FetchPolicy) => {
    let shared = sharedDependencies.get(policy);
    if (!shared) {
      const withId = [purgeGeneration(type), ...policy.types.map(typeGeneration)];
      sharedDependencies.set(policy, (shared = { withId, withoutId: { shared: [...withId, typeGeneration(type)] } }));
    }
    return shared;
  };

  const entities = async (subgraph: string, shape: Extract<FetchShape, { kind: 'entities' }>, request: ExecutionRequest, executor: Executor, caller: string) => {
    const { representations, ...others } = request.variables as { representations?: unknown };
    if (!Array.isArray(representations)) return executor(request);
    // An entry's key: the fetch's, its reader, then the representation's text (no digest per fetch or entity).
    const fetchKey = fetchKeyOf(subgraph, request.document, JSON.stringify(others));
    const publicKey = `${fetchKey}\u0000${PUBLIC_READER}\u0000`;
    const callerKey = `${fetchKey}\u0000${caller}\u0000`;
    // The representations that may be kept, and for each its type, entry key, generations and TTL: arrays side by
    // side, nothing allocated per entity but its key and its own generation.
    const cacheable: number[] = [];
    const types: string[] = [];
    const keys: string[] = [];
    const dependencies: Dependencies[] = [];
    const ttls: number[] = [];
    for (let i = 0; i < representations.length; i++) {
      const representation = representations[i] as Representation | null | undefined;
      const type = typeof representation?.__typename === 'string' ? representation.__typename : undefined;
      const policy = type === undefined ? undefined : shape.policies.get(type);
      if (!representation || !type || !policy || policy.maxAge <= 0) continue;
      const id = typeof representation.id === 'string' || typeof representation.id === 'number' ? String(representation.id) : undefined;
      const shared = sharedDependenciesOf(type, policy);
      cacheable.push(i);
      types.push(type);
      keys.push((policy.shared ? publicKey : callerKey) + JSON.stringify(representation));
      dependencies.push(id === undefined ? shared.withoutId : { shared: shared.withId, own: entityGeneration(type, id) });
      ttls.push(policy.maxAge * 1000);
    }
    if (cacheable.length === 0) return executor(request);
    const stamps = await store.stamps(dependencies, request.context);
    if (!stamps) {
      countLookups(subgraph, types, () => 'unavailable');
      return executor(request);
    }
    const held = await store.read(keys, stamps);
    const answers: unknown[] = new Array(representations.length);
    for (let n = 0; n < cacheable.length; n++) if (held[n] !== undefined) answers[cacheable[n]!] = JSON.parse(held[n]!);
    countLookups(subgraph, types, (n) => (held[n] === undefined ? 'miss' : 'hit'));
    const missing: number[] = [];
    for (let i = 0; i < representations.length; i++) if (answers[i] === undefined) missing.push(i);
    markSpan(request, representations.length - missing.length, missing.length);
    if (missing.length === 0) return { data: { _entities: answers } } satisfies Result;

    const narrowed = missing.length === representations.length ? request : { ...request, variables: { ...request.variables, representations: missing.map((i) => representations[i]) } };
    if (narrowed !== request) options.sign?.(narrowed);
    const fetched = (await executor(narrowed)) as Result | AsyncIterable<Result>;
    if (isAsyncIterable(fetched)) return fetched;
    const list = fetched.data?.['_entities'];
    const errored = erroredPositions(fetched.errors as readonly GraphQLError[] | undefined);
    if (Array.isArray(list) && list.length === missing.length && errored) {
      const kept: StoredEntry[] = [];
      // Where each representation stands among the cacheable ones (-1: not cacheable).
      const nth = new Array<number>(representations.length).fill(-1);
      cacheable.forEach((i, n) => (nth[i] = n));
      missing.forEach((i, j) => {
        answers[i] = list[j];
        const n = nth[i]!;
        if (n >= 0 && list[j] !== null && list[j] !== undefined && !errored.has(j)) kept.push({ key: keys[n]!, stamp: stamps.shared[n]!, own: stamps.own[n], value: JSON.stringify(list[j]), ttlMs: ttls[n]! });
      });
      store.write(kept);
    }
    if (narrowed === request) return fetched;
    // Narrowed: the answers put back at their places, and the errors with them.
    const errors = fetched.errors?.map((error) => movedError(error as GraphQLError, missing));
    if (!Array.isArray(list) || list.length !== missing.length) return { ...fetched, ...(errors ? { errors } : {}) };
    return { ...fetched, data: { ...fetched.data, _entities: answers }, ...(errors ? { errors } : {}) };
  };

  const rootFields = async (subgraph: string, shape: Extract<FetchShape, { kind: 'root' }>, request: ExecutionRequest, executor: Executor, caller: string) => {
    const { policy, entity, values } = shape;
    const type = 'Query';
    const key = `${fetchKeyOf(subgraph, request.document, JSON.stringify(request.variables ?? {}))}\u0000${policy.shared ? PUBLIC_READER : caller}`;
    const id = entity && ('value' in entity.id ? entity.id.value : request.variables?.[entity.id.variable]);
    const dependencies =
      entity && (typeof id === 'string' || typeof id === 'number')
        ? [purgeGeneration(entity.type), entityGeneration(entity.type, String(id)), ...policy.types.map(typeGeneration)]
        : [...[...(entity ? [entity.type] : []), ...policy.types].map(rootGeneration), ...(values ? [VALUES_GENERATION] : [])];
    const stamps = await store.stamps([{ shared: dependencies }], request.context);
    if (!stamps) {
      lookups.inc({ subgraph, type, result: 'unavailable' });
      return executor(request);
    }
    const [held] = await store.read([key], stamps);
    lookups.inc({ subgraph, type, result: held === undefined ? 'miss' : 'hit' });
    markSpan(request, held === undefined ? 0 : 1, held === undefined ? 1 : 0);
    if (held !== undefined) return { data: JSON.parse(held) as Record<string, unknown> } satisfies Result;
    const fetched = (await executor(request)) as Result | AsyncIterable<Result>;
    if (!isAsyncIterable(fetched) && fetched.data && !fetched.errors?.length) {
      store.write([{ key, stamp: stamps.shared[0]!, own: undefined, value: JSON.stringify(fetched.data), ttlMs: policy.maxAge * 1000 }]);
    }
    return fetched;
  };

  /**
   * A result that names no object says nothing of its write: every type of each subgraph that wrote without declaring
   * goes whole (of every subgraph where it is unknown which wrote: two mutations of a batch, a subgraph not found).
   */
  const withUnnamed = (written: Written, fetches: MutationFetches): Written => {
    if (!written.unnamed) return written;
    const all = [...(served?.types.values() ?? [])].flat();
    const known = [...fetches.undeclaredSubgraphs].map((subgraph) => served?.types.get(graphValue(subgraph)));
    for (const type of known.length > 0 && known.every(Boolean) ? known.flat() : all) written.types.add(type!);
    return written;
  };

  const invalidateAll = async (request: Request): Promise<Response> => {
    let body: unknown;
    try {
      body = await request.json();
    } catch {
      body = Symbol('unreadable');
    }
    const schema = served?.schema;
    const parsed = parseInvalidations(body, (name) => isObjectType(schema?.getType(name)));
    if (typeof parsed === 'string') return errorResponse(400, ErrorCode.BAD_REQUEST, parsed);
    try {
      if (parsed.some(({ kind }) => kind === 'everything')) {
        await store.purgeAll();
        invalidations.inc({ cause: 'purge', result: 'ok' });
      } else {
        // What root fields answer without naming an object may hang on what was written around the gateway too.
        const generations = parsed.flatMap((item) => {
          if (item.kind === 'everything') return [];
          const own = item.kind === 'entity' ? entityGeneration(item.type, item.id) : purgeGeneration(item.type);
          return [own, typeGeneration(item.type), rootGeneration(item.type)];
        });
        await bump([...generations, VALUES_GENERATION], 'purge');
      }
    } catch (error) {
      logger.error({ err: error }, 'cache invalidation failed');
      return errorResponse(503, ErrorCode.INTERNAL_SERVER_ERROR, 'The caches cannot be invalidated now (Redis is not reachable)');
    }
    logger.info({ invalidated: parsed }, 'caches invalidated');
    return Response.json({ invalidated: parsed }, { headers: { 'cache-control': 'no-store' } });
  };

  const plugin: GatewayPlugin = {
    onSchemaChange({ schema }) {
      served = { schema, hints: cacheHints(schema), keys: entityKeys(schema), shapes: new WeakMap(), types: subgraphTypes(schema) };
    },
    onRequest({ request, url, serverContext, endResponse }) {
      if (url.pathname !== CACHE_INVALIDATION_PATH && url.pathname !== LEGACY_PURGE_PATH) return undefined;
      if (request.method !== 'POST') {
        endResponse(errorResponse(405, ErrorCode.METHOD_NOT_ALLOWED, `${url.pathname} takes POST only`, { allow: 'POST' }));
        return undefined;
      }
      const refused = refusal(request, options.invalidationKey, viewerOf(serverContext)?.role);
      if (refused) {
        endResponse(refused);
        return undefined;
      }
      return invalidateAll(request).then(endResponse);
    },
    // A write's entities are dropped before its result goes on to its client, whatever the transport.
    onExecute({ args, executeFn, setExecuteFn }) {
      if (getOperationAST(args.document, args.operationName)?.operation !== 'mutation') return;
      setExecuteFn(async (executed: ExecutionArgs) => {
        const fetches: MutationFetches = { fetches: 0, undeclared: 0, undeclaredSubgraphs: new Set(), declared: [] };
        const context = executed.contextValue;
        if (context && typeof context === 'object') {
          // Two mutations of one context (a batch sharing it) cannot tell their fetches apart: neither trusts them,
          // and each holds the other's undeclared subgraphs for its own.
          const other = mutationFetches.get(context);
          if (other) {
            other.undeclared = fetches.undeclared = 1;
            fetches.undeclaredSubgraphs = other.undeclaredSubgraphs;
          }
          mutationFetches.set(context, fetches);
        }
        const result = (await executeFn(executed)) as ExecutionResult | AsyncIterable<ExecutionResult>;
        // The mutation's own fetches end with its last part: its deferred parts ask their subgraphs too.
        const done = () => {
          if (context && typeof context === 'object' && mutationFetches.get(context) === fetches) mutationFetches.delete(context);
        };
        if (isAsyncIterable(result)) {
          // In parts (@defer): every type its root fields return goes, before the first part (the write committed).
          let dropped = false;
          return mapAsyncIterator(
            result,
            async (part) => {
              if (!dropped) {
                dropped = true;
                await bump(generationsOf(withUnnamed(returnedTypes(executed), fetches), false), 'mutation').catch((error: unknown) => logger.error({ err: error }, 'entity cache invalidation failed'));
              }
              return part;
            },
            undefined,
            done,
          );
        }
        done();
        // Every subgraph that wrote said what it changed: taken at its word (Apollo Router's model). Otherwise the
        // mutation's result is read instead, and the types it holds go whole.
        const declared = fetches.fetches > 0 && fetches.undeclared === 0;
        const written = declared ? declaredWrites(fetches.declared) : withUnnamed(writtenEntities(executed.schema, executed.document, executed.operationName, result), fetches);
        const generations = generationsOf(written, declared);
        if (generations.length > 0) {
          await bump(generations, declared ? 'declared' : 'mutation').catch((error: unknown) => {
            // Committed all the same: this replica now serves nothing from the cache until it has replaced the epoch.
            logger.error({ err: error }, 'entity cache invalidation failed');
          });
        }
        return result;
      });
    },
    onSubgraphExecute({ subgraphName, executionRequest, executor, setExecutor }) {
      if (executionRequest.operationType === 'mutation') {
        const fetches = executionRequest.context ? mutationFetches.get(executionRequest.context) : undefined;
        if (!fetches) return;
        fetches.fetches++;
        setExecutor((async (request: ExecutionRequest) => {
          const result = (await executor(request)) as Result | AsyncIterable<Result>;
          const declared = isAsyncIterable(result) ? undefined : invalidationsIn(result.extensions);
          if (declared) fetches.declared.push(...declared);
          else {
            fetches.undeclared++;
            fetches.undeclaredSubgraphs.add(subgraphName);
          }
          return result;
        }) as Executor);
        return;
      }
      // A query's fetches only: a subscription's events, and the fetches completing a mutation's answer (whose
      // entities the write may have changed, the bump still to come), always ask their subgraphs.
      if (executionRequest.operationType !== 'query' || executionRequest.info?.operation?.operation === 'subscription') return;
      if (executionRequest.context && mutationFetches.has(executionRequest.context)) return;
      const shape = shapeOf(executionRequest.document, subgraphName);
      if (shape.kind === 'uncached' || (shape.kind === 'root' && shape.policy.maxAge <= 0)) return;
      setExecutor(((request: ExecutionRequest) => {
        const caller = callerOf(request);
        if (caller === undefined) {
          if (request.context) lookups.inc({ subgraph: subgraphName, type: shape.kind === 'root' ? 'Query' : 'entity', result: 'bypass' });
          return executor(request);
        }
        return shape.kind === 'entities' ? entities(subgraphName, shape, request, executor, caller) : rootFields(subgraphName, shape, request, executor, caller);
      }) as Executor);
    },
  };
  return { plugin };
}
