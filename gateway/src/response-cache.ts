// The response cache for public responses: Yoga's response cache kept in Redis, so replicas share it, each response for
// the maxAge its Cache-Control header states.
import { createHash } from 'node:crypto';
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';
import { defaultBuildResponseCacheKey } from '@envelop/response-cache';
import { createInMemoryCache, useResponseCache, type Cache } from '@graphql-yoga/plugin-response-cache';
import type { Logger, Redis } from '@ordergraph/core';
import { isAsyncIterable, mapAsyncIterator } from '@graphql-tools/utils';
import { handleMaybePromise } from '@whatwg-node/promise-helpers';
import { Kind, OperationTypeNode, getOperationAST, type DocumentNode, type ExecutionArgs, type ExecutionResult, type SelectionNode } from 'graphql';
import { isConnected } from './shared-state.js';

const KEY_PREFIX = 'ordergraph:response:';
/** The key of every request the cache neither reads nor fills. */
const UNCACHED = 'uncached';

interface Entity {
  typename: string;
  id?: number | string;
}

const entityKey = ({ typename, id }: Entity) => `${KEY_PREFIX}entity:${typename}:${id}`;
/** Only entities with an ID are indexed: a mutation returns the entities it changed, each with its ID. */
const identified = (entities: Iterable<Entity>) => [...entities].filter((entity) => entity.id !== undefined && entity.id !== null);

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
        await Promise.all(
          [...new Set(identified(entities).map(entityKey))].map((key) =>
            redis.multi().sadd(key, id).pexpire(key, px, 'NX').pexpire(key, px, 'GT').exec(),
          ),
        );
        await redis.set(KEY_PREFIX + id, JSON.stringify(result), 'PX', px);
      } catch (error) {
        failed('write')(error);
      }
    },
    async invalidate(entities) {
      if (!isConnected(redis)) return;
      try {
        const keys = [...new Set(identified(entities).map(entityKey))];
        const members = await Promise.all(keys.map((key) => redis.smembers(key)));
        await Promise.all([...keys, ...members.flat().map((id) => KEY_PREFIX + id)].map((key) => redis.del(key)));
      } catch (error) {
        failed('invalidation')(error);
      }
    },
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

/** The alias under which the response cache adds `__typename` to every selection set it executes. */
const CACHE_TYPENAME = '__responseCacheTypeName';

const isCacheTypename = (selection: SelectionNode) =>
  selection.kind === Kind.FIELD && selection.name.value === '__typename' && selection.alias?.value === CACHE_TYPENAME;

const rootLeftAloneOf = new WeakMap<DocumentNode, DocumentNode>();

/** The document without the cache's `__typename` on its operations' root (the same document when it has none). */
function rootLeftAlone(document: DocumentNode): DocumentNode {
  let left = rootLeftAloneOf.get(document);
  if (!left) {
    const added = document.definitions.some((definition) => definition.kind === Kind.OPERATION_DEFINITION && definition.selectionSet.selections.some(isCacheTypename));
    left = !added
      ? document
      : {
          ...document,
          definitions: document.definitions.map((definition) =>
            definition.kind === Kind.OPERATION_DEFINITION
              ? { ...definition, selectionSet: { ...definition.selectionSet, selections: definition.selectionSet.selections.filter((selection) => !isCacheTypename(selection)) } }
              : definition,
          ),
        };
    rootLeftAloneOf.set(document, left);
  }
  return left;
}

type Execute = (args: ExecutionArgs) => unknown;

/**
 * @envelop/response-cache adds `__responseCacheTypeName: __typename` to every selection set, the operation's root
 * included, to find the entities of a result (a mutation's to invalidate, a query's to index). The root's is no entity,
 * and costs a subgraph call: the Rust planner runs a mutation's root fields one after the other, each in a fetch to
 * its subgraph, and a root `__typename`, which every subgraph can answer, becomes a fetch of its own (`mutation
 * { __responseCacheTypeName: __typename }` to catalog after every createOrder); on a query it rides along with one of
 * the fetches. The plugin's executor is given one that leaves the root alone and answers that field itself, with the
 * root type's name, so the plugin reads the very result it would have had.
 */
const answeringRootTypename =
  (execute: Execute): Execute =>
  (args) => {
    const document = rootLeftAlone(args.document);
    if (document === args.document) return execute(args);
    const root = args.schema.getRootType(getOperationAST(args.document, args.operationName)?.operation ?? OperationTypeNode.QUERY)?.name;
    const withRoot = <T extends ExecutionResult>(result: T): T => (result.data ? { ...result, data: { ...result.data, [CACHE_TYPENAME]: root } } : result);
    return handleMaybePromise(
      () => execute({ ...args, document }),
      // Of an answer in parts (@defer), only the first has `data`.
      (result) => (isAsyncIterable<ExecutionResult>(result) ? mapAsyncIterator(result, withRoot) : withRoot(result as ExecutionResult)),
    );
  };

// Only anonymous queries are cached; a mutation through any replica drops the cached responses that contain the
// entities it returns (Product:<id> after updateProduct), and every entry expires with its hint in any case.
// Conditional GETs (If-None-Match, If-Modified-Since) are answered 304 at the very end, once every other plugin, the
// rate limit first, has run.
export function useSharedResponseCache(options: ResponseCacheOptions): GatewayPlugin {
  const { onRequest: _answeredTooEarly, ...cache } = useResponseCache({
    cache: options.redis ? redisResponseCache(options.redis, options.logger) : createInMemoryCache(),
    // Everyone shares one public cache; authenticated queries never reach it (enabled below).
    session: () => null,
    enabled: (request, context) => options.cacheable(request, context) || options.mutates(context),
    // The key is a SHA-256 of the document and variables, computed for every request; those the cache cannot serve
    // (a mutation only invalidates) need none.
    buildResponseCacheKey: (params) => (options.cacheable(params.request, params.context) ? defaultBuildResponseCacheKey(params) : UNCACHED),
    // The TTL is the request's cache policy, the one its Cache-Control header states (cache-control.ts).
    onTtl: ({ context }) => options.maxAge((context as { request: Request }).request) * 1000,
    includeExtensionMetadata: false,
  });
  // The envelop plugin, which yoga's adds at init, executes through answeringRootTypename.
  const onPluginInit: NonNullable<typeof cache.onPluginInit> = (payload) =>
    cache.onPluginInit!({
      ...payload,
      addPlugin: (plugin) =>
        payload.addPlugin(
          plugin.onExecute
            ? { ...plugin, onExecute: (params) => plugin.onExecute!({ ...params, executeFn: answeringRootTypename(params.executeFn as Execute) as typeof params.executeFn }) }
            : plugin,
        ),
    });
  return { ...cache, onPluginInit, onResponse: answerConditionalRequest } as GatewayPlugin;
}
