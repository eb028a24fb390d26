// The query planner the gateway executes on (QUERY_PLANNER: `rust`, Hive's Rust planner, by default; `js`, kept one
// release as a way back), and what the Rust planner's executor leaves for us to do.
import type { GatewayPlugin, UnifiedGraphHandler } from '@graphql-hive/gateway-runtime';
import { useQueryPlan } from '@graphql-hive/router-runtime';
import { ErrorCode, type Viewer } from '@ordergraph/core';
import { getOperationASTFromRequest, isAsyncIterable, isPromise, mapAsyncIterator, MapperKind, mapSchema } from '@graphql-tools/utils';
import {
  GraphQLError,
  GraphQLInterfaceType,
  GraphQLUnionType,
  Kind,
  execute,
  isInterfaceType,
  isObjectType,
  responsePathAsArray,
  type DocumentNode,
  type ExecutionResult,
  type GraphQLFieldResolver,
  type GraphQLResolveInfo,
  type GraphQLSchema,
  type GraphQLTypeResolver,
} from 'graphql';
import { federationHandlerWithDefer, unifiedGraphHandlerWithDefer } from './defer.js';
import { clientLeft } from '../shared/request-signals.js';
import { TRANSPORT_FAILURES } from '../subgraphs/upstream.js';

export const QUERY_PLANNERS = ['rust', 'js'] as const;
export type QueryPlanner = (typeof QUERY_PLANNERS)[number];

/**
 * The runtime option that selects the planner: the Rust one, or the runtime's own JavaScript one, each declaring @defer
 * in its schema. On `rust`, operations that defer part of their result still run on the JavaScript planner, which alone
 * executes @defer (defer.ts).
 */
export const plannerOptions = (planner: QueryPlanner) => ({
  unifiedGraphHandler: planner === 'rust' ? eventsWithTheirOwnErrors(unifiedGraphHandlerWithDefer) : federationHandlerWithDefer,
});


/**
 * The Rust planner's executor keeps one list of errors for a subscription's whole life (router-runtime 1.4.23 makes
 * the execution context once per operation, and each event's result is handed that same list): every event carried
 * the errors of all the events before it, so one failed entity fetch followed every later event, and the list grew
 * for as long as the subscription lasted. Each event gets the errors of its own execution, and the list starts empty
 * for the next one (events are executed one after the other, each once the previous one has been read).
 */
function eventsWithTheirOwnErrors(handler: UnifiedGraphHandler): UnifiedGraphHandler {
  const ownErrors = (event: ExecutionResult): ExecutionResult => {
    if (!event.errors?.length) return event;
    const errors = [...event.errors];
    (event.errors as GraphQLError[]).length = 0;
    return { ...event, errors };
  };
  const ownEvents = <T>(result: T) => (isAsyncIterable<ExecutionResult>(result) ? (mapAsyncIterator(result, ownErrors) as T) : result);
  return async (options) => {
    const handled = await handler(options);
    const executor = handled.executor;
    if (!executor) return handled;
    return {
      ...handled,
      executor: (request) => {
        const result = executor(request);
        if ((request.operationType ?? getOperationASTFromRequest(request)?.operation) !== 'subscription') return result;
        return isPromise(result) ? result.then(ownEvents) : ownEvents(result);
      },
    };
  };
}

/** What re-reading a result needs of the operation that produced it. */
export interface ExecutedOperation {
  schema: GraphQLSchema;
  document: DocumentNode;
  operationName?: string | null | undefined;
  variableValues?: Record<string, unknown> | null | undefined;
}

/** A field of a result, with its value, in the order graphql-js completes them. */
export type FieldVisitor = (info: GraphQLResolveInfo, value: unknown) => void;

const pathKey = (info: GraphQLResolveInfo) => responsePathAsArray(info.path).join('.');
/** The path with `@` for every list index: how an error about a field of every item names it (authorization.ts). */
const everyItemPathKey = (info: GraphQLResolveInfo) =>
  responsePathAsArray(info.path).map((key) => (typeof key === 'number' ? '@' : key)).join('.');

/**
 * An abstract type resolves to the result's `__typename` when it was selected; otherwise to a possible type whose
 * fields hold every key of the value (the planner has already applied the fragments' type conditions), preferring one
 * the selection names in a fragment: `{ id name }` under `... on Product` is a Product, not the User that also has both.
 */
const typeResolver: GraphQLTypeResolver<unknown, unknown> = (value, _context, info, abstractType) => {
  const object = value as Record<string, unknown>;
  if (typeof object['__typename'] === 'string') return object['__typename'];
  const keys = Object.keys(object);
  const fitting = info.schema.getPossibleTypes(abstractType).filter((type) => isObjectType(type) && keys.every((key) => key in type.getFields()));
  const named = new Set(
    info.fieldNodes.flatMap((node) =>
      (node.selectionSet?.selections ?? []).flatMap((selection) => {
        if (selection.kind === Kind.INLINE_FRAGMENT) return selection.typeCondition ? [selection.typeCondition.name.value] : [];
        if (selection.kind === Kind.FRAGMENT_SPREAD) return [info.fragments[selection.name.value]?.typeCondition.name.value ?? ''];
        return [];
      }),
    ),
  );
  return (fitting.find((type) => named.has(type.name)) ?? fitting[0] ?? info.schema.getPossibleTypes(abstractType)[0])?.name;
};

const dataOnlySchemas = new WeakMap<GraphQLSchema, GraphQLSchema>();

/**
 * The schema without resolvers of its own, so that completion reads the result alone: the Rust planner's schema has
 * none, the JavaScript planner's delegates every field to its subgraph. Made once per schema.
 */
function dataOnly(schema: GraphQLSchema): GraphQLSchema {
  let stripped = dataOnlySchemas.get(schema);
  if (!stripped) {
    stripped = mapSchema(schema, {
      [MapperKind.OBJECT_FIELD]: (field) => ({ ...field, resolve: undefined, subscribe: undefined }),
      [MapperKind.ABSTRACT_TYPE]: (type) =>
        isInterfaceType(type) ? new GraphQLInterfaceType({ ...type.toConfig(), resolveType: undefined }) : new GraphQLUnionType({ ...type.toConfig(), resolveType: undefined }),
    });
    dataOnlySchemas.set(schema, stripped);
  }
  return stripped;
}

/** Errors that came from a subgraph over WebSocket arrive as plain objects; ours are GraphQLErrors. */
function asGraphQLError(error: unknown): unknown {
  if (error instanceof Error || typeof error !== 'object' || error === null || typeof (error as { message?: unknown }).message !== 'string') return error;
  const { message, path, extensions } = error as { message: string; path?: readonly (string | number)[]; extensions?: Record<string, unknown> };
  return new GraphQLError(message, { path: path ?? null, extensions: extensions ?? {} });
}

/**
 * A subgraph call that got no answer (refused, reset, timed out, circuit open) says nothing about the object at its
 * error's path, only that the fields it was to bring are missing. The executor places such an error on the entity it
 * was fetching fields of (`newOrderCreated.user`), which another subgraph's data already holds: nulling that entity
 * would null every non-null parent up to `data: null`, when only the missing fields are unknown. Those are left to
 * completion, which nulls each missing field as its nullability says (`user { name }` stays `{ name: null }`).
 */
const unanswered = (error: GraphQLError) => {
  const code = error.extensions?.['code'];
  return TRANSPORT_FAILURES.has(code) || (code === ErrorCode.SUBGRAPH_UNAVAILABLE && error.extensions?.['circuit'] === 'open');
};

/**
 * Reads a result through graphql-js's own completion, with every field resolved from the result itself: a field a
 * subgraph reported an error for is null (one a call without an answer was for: only its missing fields), a non-null field left null nulls its parent, up to `data: null`, exactly as
 * graphql-js executes. The Rust planner's executor only projects subgraph data onto the operation, so without this an
 * unknown `node(id)` would keep the representation the first fetch returned, and a failed non-null root would leave
 * no `data` at all. `visit` sees every field, for tracing. The errors stay the ones the subgraphs reported.
 */
export function completeResult(operation: ExecutedOperation, result: ExecutionResult, visit?: FieldVisitor): ExecutionResult {
  const errors = result.errors?.map(asGraphQLError) as GraphQLError[] | undefined;
  const failed = new Set(errors?.flatMap((error) => (error.path && !unanswered(error) ? [error.path.join('.')] : [])));
  const fieldResolver: GraphQLFieldResolver<unknown, unknown> = (source, _args, _context, info) => {
    const value =
      failed.size > 0 && (failed.has(pathKey(info)) || failed.has(everyItemPathKey(info))) ? null : ((source as Record<string, unknown> | null | undefined)?.[info.path.key as string] ?? null);
    visit?.(info, value);
    return value;
  };
  const completed = execute({
    schema: dataOnly(operation.schema),
    document: operation.document,
    operationName: operation.operationName,
    variableValues: operation.variableValues,
    rootValue: result.data ?? {},
    fieldResolver,
    typeResolver,
  }) as ExecutionResult;
  return { ...result, data: completed.data ?? null, ...(errors ? { errors } : {}) };
}

interface ExecuteArgs {
  schema: GraphQLSchema;
  contextValue?: unknown;
  document: DocumentNode;
  operationName?: string | null;
  variableValues?: Record<string, unknown> | null;
}

const isSingle = (result: unknown): result is ExecutionResult => typeof result === 'object' && result !== null && !(Symbol.asyncIterator in result);

/**
 * graphql-js's completion for the results that need it: those with field errors (a result without any is complete,
 * every subgraph having completed its own part), on either planner (the JavaScript one completes subgraph errors
 * itself, but not fields the authorization directives took out), for queries, mutations and each event of a subscription. Errors
 * without a path are a refusal before execution (a limit, an expired token) and keep their result as it is. A result
 * is completed against the operation as the client sent it, so a field taken out of it by the authorization directives
 * (authorization.ts) is null with its error, and nulls its parent when it is non-null.
 */
export function useResultCompletion(documentAsSent: (context: unknown, executed: DocumentNode) => DocumentNode): GatewayPlugin {
  const completeOnError = (args: ExecuteArgs) => ({ result, setResult }: { result: unknown; setResult(result: ExecutionResult): void }) => {
    // A client that left reads nothing: its cancelled calls' errors are not completed into a result.
    if (isSingle(result) && result.errors?.some((error) => error.path) && !clientLeft(args.contextValue)) {
      setResult(completeResult({ ...args, document: documentAsSent(args.contextValue, args.document) }, result));
    }
  };
  return {
    onExecute: ({ args }) => ({ onExecuteDone: completeOnError(args) }),
    onSubscribe: ({ args }) => ({ onSubscribeResult: () => ({ onNext: completeOnError(args) }) }),
  };
}

/** The Rust planner's plan for this execution, read the way its own useQueryPlan plugin reads it; none on `js`. */
export function queryPlanOf(context: unknown, args: unknown): unknown {
  let plan: unknown;
  const hooks = useQueryPlan({ onQueryPlan: (queryPlan) => (plan = queryPlan) }) as {
    onExecute(payload: unknown): { onExecuteDone(payload: unknown): void };
  };
  hooks.onExecute({ context, args }).onExecuteDone({ result: {}, setResult: () => {} });
  return plan;
}

/** Headers that ask for the query plan: ours, and the one Apollo Router reads. */
const QUERY_PLAN_HEADERS: [string, string][] = [
  ['x-ordergraph-query-plan', '1'],
  ['apollo-expose-query-plan', 'true'],
];

export const wantsQueryPlan = (request: Request): boolean => QUERY_PLAN_HEADERS.some(([header, value]) => request.headers.get(header) === value);

/**
 * Query plan inspection for administrators: `X-Ordergraph-Query-Plan: 1` (or Apollo Router's
 * `Apollo-Expose-Query-Plan: true`) adds the Rust planner's plan as `extensions.queryPlan`. Anyone else, and the
 * JavaScript planner, which keeps no plan, get the response without it. The plan names subgraphs and their
 * operations, so it is never shown to other callers.
 */
export function useQueryPlanInspection(): GatewayPlugin {
  return {
    onExecute({ args }) {
      const context = args.contextValue as { request?: Request; viewer?: Viewer };
      if (!context.request || !wantsQueryPlan(context.request) || context.viewer?.role !== 'ADMIN') return;
      return {
        onExecuteDone({ result, setResult }) {
          if (!isSingle(result)) return;
          const queryPlan = queryPlanOf(args.contextValue, args);
          if (queryPlan) setResult({ ...result, extensions: { ...result.extensions, queryPlan } });
        },
      };
    },
  };
}
