// Cache hints (Apollo's @cacheControl, composed into the supergraph) and the Cache-Control header they make: one
// policy per response, worked out from the document before execution, whether the cache or the subgraphs answer.
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';
import {
  TypeInfo,
  getNamedType,
  getOperationAST,
  isCompositeType,
  isInterfaceType,
  isObjectType,
  visit,
  visitWithTypeInfo,
  type ConstDirectiveNode,
  type DocumentNode,
  type GraphQLNamedType,
  type GraphQLSchema,
} from 'graphql';
import { viewerOf, type OperationReader, type RequestOperation } from '../execution/operation.js';
import { wantsTracing } from '../observability/tracing.js';

export type CacheScope = 'PUBLIC' | 'PRIVATE';

export interface CacheHints {
  /** maxAge in seconds by schema coordinate (`Type.field`); a coordinate absent here inherits its parent's. */
  maxAge: Record<string, number>;
  scope: Record<string, CacheScope>;
}

export interface CachePolicy {
  /** Seconds; 0 is uncacheable. */
  maxAge: number;
  scope: CacheScope;
}

/** A node's own @cacheControl arguments (undefined where it has none). */
export function cacheControlOf(node: { astNode?: { directives?: readonly ConstDirectiveNode[] | undefined } | null | undefined }) {
  const directive = node.astNode?.directives?.find((candidate) => candidate.name.value === 'cacheControl');
  const argument = (name: string) => directive?.arguments?.find((candidate) => candidate.name.value === name)?.value;
  const maxAge = argument('maxAge');
  const scope = argument('scope');
  return {
    maxAge: maxAge?.kind === 'IntValue' ? Number(maxAge.value) : undefined,
    scope: scope?.kind === 'EnumValue' ? (scope.value as CacheScope) : undefined,
  };
}

// Apollo's rules: a field without a hint has maxAge 0 when it is a root field or returns an object, interface or
// union (or that type's own hint); a scalar field inherits its parent's. A response's policy is the smallest maxAge
// over the fields its document selects.
/** Every field's effective hint, from a schema whose AST carries the composed @cacheControl directives. */
export function cacheHints(schema: GraphQLSchema): CacheHints {
  const hints: CacheHints = { maxAge: {}, scope: {} };
  const roots = new Set<string>();
  for (const root of [schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()]) {
    if (!root) continue;
    roots.add(root.name);
    for (const meta of ['__schema', '__type']) hints.maxAge[`${root.name}.${meta}`] = 0;
  }
  for (const type of Object.values(schema.getTypeMap()) as GraphQLNamedType[]) {
    if (type.name.startsWith('__') || !(isObjectType(type) || isInterfaceType(type))) continue;
    for (const field of Object.values(type.getFields())) {
      const coordinate = `${type.name}.${field.name}`;
      const returned = getNamedType(field.type);
      const own = cacheControlOf(field);
      const ofType = isCompositeType(returned) ? cacheControlOf(returned) : undefined;
      const maxAge = own.maxAge ?? ofType?.maxAge ?? (roots.has(type.name) || ofType ? 0 : undefined);
      const scope = own.scope ?? ofType?.scope;
      if (maxAge !== undefined) hints.maxAge[coordinate] = maxAge;
      if (scope !== undefined) hints.scope[coordinate] = scope;
    }
  }
  return hints;
}

export function cachePolicy(schema: GraphQLSchema, hints: CacheHints, { document, operation }: RequestOperation): CachePolicy {
  if (operation.operation !== 'query') return { maxAge: 0, scope: 'PUBLIC' };
  let maxAge = Infinity;
  let scope: CacheScope = 'PUBLIC';
  const typeInfo = new TypeInfo(schema);
  visit(
    document,
    visitWithTypeInfo(typeInfo, {
      Field(field) {
        const coordinate = `${typeInfo.getParentType()?.name}.${field.name.value}`;
        maxAge = Math.min(maxAge, hints.maxAge[coordinate] ?? Infinity);
        if (hints.scope[coordinate] === 'PRIVATE') scope = 'PRIVATE';
      },
    }),
  );
  // Nothing but __typename selected: no hint at all, which Apollo treats as uncacheable too.
  return { maxAge: Number.isFinite(maxAge) ? maxAge : 0, scope };
}

/** The header for a response: public only for anonymous callers and PUBLIC hints; no-store when uncacheable. */
export function cacheControlHeader(policy: CachePolicy | undefined, authenticated: boolean): string {
  if (!policy || policy.maxAge <= 0) return 'no-store';
  return `${authenticated || policy.scope === 'PRIVATE' ? 'private' : 'public'}, max-age=${policy.maxAge}`;
}

const SERVED_FROM_CACHE = Symbol.for('servedFromResponseCache');

interface CachedResult {
  [SERVED_FROM_CACHE]?: boolean;
  extensions?: { http?: { headers?: Record<string, string> } };
}

export interface CacheControl {
  plugin: GatewayPlugin;
  /** The policy of a request's operation; undefined before it is known or when it cannot run. */
  policyOf(request: Request): CachePolicy | undefined;
}

/**
 * Works out each request's cache policy from the schema being served (its hints re-read whenever the supergraph
 * changes), and sets Cache-Control on every GraphQL response: the policy for a successful single result, `no-store` for
 * errors, streams, traced and refused requests. A response the cache answers also says its `Age`, so that no client
 * keeps it past the hint.
 */
export function createCacheControl(options: { readOperation: OperationReader; graphqlEndpoint: string }): CacheControl {
  let served: { schema: GraphQLSchema; hints: CacheHints; queries: WeakMap<DocumentNode, CachePolicy> } | undefined;
  const policies = new WeakMap<Request, CachePolicy>();
  const cachedAt = new WeakMap<Request, number>();
  const record = (request: Request, operation: RequestOperation) => {
    if (!served || policies.has(request)) return;
    const { schema, hints, queries } = served;
    // Documents are shared between requests (the operation reader caches them), so each query is walked once.
    let policy = operation.operation.operation === 'query' ? queries.get(operation.document) : undefined;
    if (!policy) policy = cachePolicy(schema, hints, operation);
    if (operation.operation.operation === 'query') queries.set(operation.document, policy);
    policies.set(request, policy);
  };
  const plugin: GatewayPlugin = {
    onSchemaChange({ schema }) {
      served = { schema, hints: cacheHints(schema), queries: new WeakMap() };
    },
    onParams({ params, request }) {
      const operation = options.readOperation(params);
      if (operation) record(request, operation);
    },
    // The very first request can arrive before the schema is loaded; its policy is known by execution.
    onExecute({ args }) {
      const request = (args.contextValue as { request?: Request }).request;
      const operation = request && getOperationAST(args.document, args.operationName);
      if (request && operation) record(request, { document: args.document, operation });
    },
    onExecutionResult({ request, result }) {
      const single = result as (CachedResult & { errors?: readonly unknown[] }) | AsyncIterable<unknown>;
      if (Symbol.asyncIterator in single || single.errors?.length) {
        policies.delete(request);
        return;
      }
      const lastModified = single.extensions?.http?.headers?.['Last-Modified'];
      if (single[SERVED_FROM_CACHE] && lastModified) cachedAt.set(request, Date.parse(lastModified));
    },
    onResponse({ request, response, serverContext }) {
      if (new URL(request.url).pathname !== options.graphqlEndpoint || response.status === 304) return;
      // A traced response describes one execution; no cache keeps it.
      const policy = response.status === 200 && !wantsTracing(request) ? policies.get(request) : undefined;
      const header = cacheControlHeader(policy, viewerOf(serverContext) !== null);
      response.headers.set('cache-control', header);
      if (header.startsWith('public')) response.headers.append('vary', 'Authorization');
      const since = cachedAt.get(request);
      if (policy && since !== undefined) response.headers.set('age', String(Math.max(0, Math.floor((Date.now() - since) / 1000))));
    },
  };
  return { plugin, policyOf: (request) => policies.get(request) };
}
