// The entity cache (ENTITY_CACHE=on): subgraph answers kept per entity (`_entities` fetches, one entry per
// representation) and per cacheable root-field fetch, shared by the replicas through Redis (entity-store.ts), dropped
// by the writes that change them before their responses leave, and by an administrator's purge.
import { createHash } from 'node:crypto';
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';
import { isAsyncIterable, mapAsyncIterator, type ExecutionRequest, type Executor } from '@graphql-tools/utils';
import { ErrorCode, invalidationsIn, setSpanAttributes, type Invalidation, type Logger } from '@ordergraph/core';
import { GraphQLError, getOperationAST, isObjectType, type DocumentNode, type ExecutionArgs, type ExecutionResult } from 'graphql';
import { Counter, type Registry } from 'prom-client';
import { cacheHints } from './cache-control.js';
import type { Dependencies, EntityStore, StoredEntry } from './entity-store.js';
import { VALUES_GENERATION, entityGeneration, purgeGeneration, rootGeneration, typeGeneration } from './generations.js';
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
 * The generations a write bumps: of each entity named (its subgraph named every entity whose fields or lists it
 * changed) its own and the lists of its type, every generation of a type written whole, and VALUES_GENERATION: what root
 * fields answer without naming an object may have changed with any write.
 */
const generationsOf = (written: Written): string[] => [
  VALUES_GENERATION,
  ...[...written.entities].flatMap(([type, ids]) => [rootGeneration(type), ...[...ids].map((id) => entityGeneration(type, id))]),
  ...[...written.types].flatMap((type) => [typeGeneration(type), purgeGeneration(type), rootGeneration(type)]),
];

/** A mutation's subgraph fetches so far: how many, and what those that declared their invalidations declared. */
interface MutationFetches {
  fetches: number;
  /** The subgraphs of the fetches that declared nothing. */
  undeclared: Set<string>;
  declared: Invalidation[];
  /** Another mutation shares the request's context: whose fetch was whose cannot be told. */
  ambiguous: boolean;
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
  let served: (ServedSchema & { shapes: WeakMap<DocumentNode, Map<string, FetchShape>>; types: ReadonlyMap<string, ReadonlySet<string>> }) | undefined;
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
    help: "Entity cache invalidations: by what a mutation's subgraphs declared it changed, by the types of a subgraph that declared nothing, or by a purge; done or failed",
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
   * What a mutation's subgraph fetches wrote. A subgraph that declared what it changed is taken at its word (Apollo
   * Router's model): the entities and types it named. One that declared nothing may have changed anything it holds,
   * whatever the mutation's result shows (a side effect, a count): every type it defines or extends goes whole. Where
   * it is unknown which subgraph wrote (two mutations of a batch, a subgraph the supergraph does not name), every
   * subgraph's types go.
   */
  const writesOf = (fetches: MutationFetches): Written => {
    const written = declaredWrites(fetches.declared);
    if (fetches.undeclared.size === 0 && !fetches.ambiguous) return written;
    const undeclared = [...fetches.undeclared].map((subgraph) => served?.types.get(graphValue(subgraph)));
    const known = !fetches.ambiguous && undeclared.every((types) => types !== undefined);
    for (const types of known ? undeclared : [...(served?.types.values() ?? [])]) for (const type of types ?? []) written.types.add(type);
    return written;
  };

  /** Bumps what a mutation wrote before its result goes on; nothing when no fetch of it reached a subgraph. */
  const invalidate = async (fetches: MutationFetches) => {
    if (fetches.fetches === 0 && !fetches.ambiguous) return;
    const cause = fetches.undeclared.size === 0 && !fetches.ambiguous ? 'declared' : 'mutation';
    await bump(generationsOf(writesOf(fetches)), cause).catch((error: unknown) => {
      // Committed all the same: this replica now serves nothing from the cache until it has replaced the epoch.
      logger.error({ err: error }, 'entity cache invalidation failed');
    });
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
        const fetches: MutationFetches = { fetches: 0, undeclared: new Set(), declared: [], ambiguous: false };
        const context = executed.contextValue;
        if (context && typeof context === 'object') {
          // Two mutations of one context (a batch sharing it) cannot tell their fetches apart: neither trusts them.
          const other = mutationFetches.get(context);
          if (other) other.ambiguous = fetches.ambiguous = true;
          mutationFetches.set(context, fetches);
        }
        const result = (await executeFn(executed)) as ExecutionResult | AsyncIterable<ExecutionResult>;
        // The mutation's own fetches end with its last part: its deferred parts ask their subgraphs too.
        const done = () => {
          if (context && typeof context === 'object' && mutationFetches.get(context) === fetches) mutationFetches.delete(context);
        };
        if (isAsyncIterable(result)) {
          // In parts (@defer): before the first part, once the root fields' writes have answered.
          let dropped = false;
          return mapAsyncIterator(
            result,
            async (part) => {
              if (!dropped) {
                dropped = true;
                await invalidate(fetches);
              }
              return part;
            },
            undefined,
            done,
          );
        }
        done();
        await invalidate(fetches);
        return result;
      });
    },
    onSubgraphExecute({ subgraphName, executionRequest, executor, setExecutor }) {
      if (executionRequest.operationType === 'mutation') {
        const fetches = executionRequest.context ? mutationFetches.get(executionRequest.context) : undefined;
        if (!fetches) return;
        fetches.fetches++;
        setExecutor((async (request: ExecutionRequest) => {
          let result: Result | AsyncIterable<Result>;
          try {
            result = (await executor(request)) as Result | AsyncIterable<Result>;
          } catch (error) {
            // No answer (the connection broke, a timeout): the write may have committed all the same.
            fetches.undeclared.add(subgraphName);
            throw error;
          }
          const declared = isAsyncIterable(result) ? undefined : invalidationsIn(result.extensions);
          if (declared) fetches.declared.push(...declared);
          else fetches.undeclared.add(subgraphName);
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
