// Apollo tracing on request (`X-Ordergraph-Tracing: 1`, or the older `X-Apollo-Tracing: 1`): extensions.tracing with
// every field and every subgraph fetch, and extensions.cost; for everyone outside production, for ADMIN in production.
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';
import type { Viewer } from '@ordergraph/core';
import {
  Kind,
  parse,
  print,
  responsePathAsArray,
  type DocumentNode,
  type ExecutionResult,
  type GraphQLError,
  type GraphQLResolveInfo,
  type OperationDefinitionNode,
} from 'graphql';
import { actualCost } from '../limits/operation-limits.js';
import { completeResult, queryPlanOf, type ExecutedOperation } from '../execution/query-planner.js';

const TRACING_HEADERS = ['x-ordergraph-tracing', 'x-apollo-tracing'];

/** Whether the request asks for a trace (whether it gets one depends on who asks). */
export const wantsTracing = (request: Request): boolean => TRACING_HEADERS.some((header) => request.headers.get(header) === '1');

export interface ResolverTrace {
  path: (string | number)[];
  parentType: string;
  fieldName: string;
  returnType: string;
  startOffset: number;
  duration: number;
}

interface Fetch {
  subgraph: string;
  document: DocumentNode;
  /** The field that needed it, when the planner says (the JavaScript planner does); else found in the query plan. */
  path: (string | number)[] | undefined;
  startOffset: number;
  duration: number;
}

interface Trace {
  startTime: Date;
  start: bigint;
  fetches: Fetch[];
}

/** Traces by execution context: the execution and its subgraph fetches both see the context of the request. */
const traces = new WeakMap<object, Trace>();

const sinceStart = (trace: Trace) => Number(process.hrtime.bigint() - trace.start);

function rootFieldOf(document: DocumentNode): string {
  const operation = document.definitions.find((definition): definition is OperationDefinitionNode => definition.kind === Kind.OPERATION_DEFINITION);
  const first = operation?.selectionSet.selections[0];
  return first?.kind === Kind.FIELD ? (first.alias ?? first.name).value : (operation?.operation ?? 'query');
}

/** A Flatten node's path in the Rust planner's plan: `{ Field: name }` entries and '@' for every list item. */
type PlanPath = (string | { Field: string })[];
interface PlanNode {
  kind: string;
  operation?: string;
  path?: PlanPath;
  node?: PlanNode;
  nodes?: PlanNode[];
  [child: string]: unknown;
}

/** The flatten path of every fetch of a query plan, by its printed operation. */
function fetchPaths(plan: PlanNode | undefined, at: string[] = [], paths = new Map<string, string[]>()): Map<string, string[]> {
  if (!plan || typeof plan !== 'object') return paths;
  if (plan.kind === 'Fetch' && plan.operation) paths.set(print(parse(plan.operation)), at);
  const here = plan.kind === 'Flatten' && plan.path ? plan.path.map((segment) => (typeof segment === 'string' ? segment : segment.Field)) : at;
  for (const child of Object.values(plan)) {
    if (Array.isArray(child)) for (const node of child) fetchPaths(node as PlanNode, here, paths);
    else if (child && typeof child === 'object') fetchPaths(child as PlanNode, here, paths);
  }
  return paths;
}

/** '@' in a fetch's path stands for any list index. */
const covers = (fetchPath: (string | number)[], path: (string | number)[]) =>
  fetchPath.length <= path.length && fetchPath.every((segment, index) => (segment === '@' ? typeof path[index] === 'number' : segment === path[index]));

/**
 * The fetch that brought a field: the deepest whose path covers the field's, preferring, among equally deep ones,
 * the fetch that selects the field (the entity's key is selected by both sides of a join).
 */
function fetchOf(fetches: { path: (string | number)[]; printed: string; fetch: Fetch }[], path: (string | number)[], fieldName: string) {
  // Word by word rather than a RegExp built from the name: nothing a client sent is ever compiled into a pattern.
  const selects = { test: (printed: string) => printed.split(/[^_0-9A-Za-z]+/).includes(fieldName) };
  let best: (typeof fetches)[number] | undefined;
  for (const candidate of fetches) {
    if (!covers(candidate.path, path)) continue;
    const deeper = !best || candidate.path.length > best.path.length;
    const sameDepthButSelects = best && candidate.path.length === best.path.length && !selects.test(best.printed) && selects.test(candidate.printed);
    if (deeper || sameDepthButSelects) best = candidate;
  }
  return best?.fetch;
}

function buildTrace(trace: Trace, operation: ExecutedOperation, result: ExecutionResult, plan: PlanNode | undefined) {
  const planned = fetchPaths(plan?.['node'] as PlanNode | undefined);
  const fetches = trace.fetches.map((fetch) => {
    const printed = print(fetch.document);
    const root = rootFieldOf(fetch.document);
    // A root fetch's plan path is empty: the field that needed it is its root field.
    const known = fetch.path ?? planned.get(printed) ?? [];
    const path = known.length > 0 ? known : [root];
    return { path, printed, fetch: { ...fetch, path } };
  });
  const resolvers: ResolverTrace[] = [];
  const cost = actualCost();
  const completed = completeResult(operation, result, (info: GraphQLResolveInfo, value) => {
    cost.visit(info, value);
    const path = responsePathAsArray(info.path);
    const fetch = fetchOf(fetches, path, info.fieldName);
    resolvers.push({
      path,
      parentType: info.parentType.name,
      fieldName: info.fieldName,
      returnType: String(info.returnType),
      startOffset: fetch?.startOffset ?? 0,
      duration: fetch?.duration ?? 0,
    });
  });
  for (const { fetch } of fetches) {
    resolvers.push({
      path: fetch.path!,
      parentType: 'Subgraph',
      fieldName: fetch.subgraph,
      returnType: rootFieldOf(fetch.document),
      startOffset: fetch.startOffset,
      duration: fetch.duration,
    });
  }
  const tracing = {
    version: 1,
    startTime: trace.startTime.toISOString(),
    endTime: new Date().toISOString(),
    duration: sinceStart(trace),
    execution: { resolvers },
  };
  return { result: { ...completed, extensions: { ...result.extensions, tracing } }, actualCost: cost.total() };
}

/** A part of an incremental result (deferSpec=20220824): the first with `data`, the later ones with `incremental`. */
interface IncrementalPart {
  data?: Record<string, unknown> | null;
  errors?: readonly GraphQLError[];
  incremental?: { data?: Record<string, unknown> | null; items?: unknown[]; path: readonly (string | number)[]; errors?: readonly GraphQLError[] }[];
  extensions?: Record<string, unknown>;
  hasNext: boolean;
}

/** Merges a later part's data into the whole at its path (a deferred fragment's fields, or a stream's items). */
function mergeAt(whole: Record<string, unknown>, path: readonly (string | number)[], data: unknown) {
  let target: unknown = whole;
  for (const key of path) target = (target as Record<string | number, unknown> | null)?.[key];
  if (target === null || typeof target !== 'object') return;
  const into = (to: Record<string, unknown>, from: Record<string, unknown>) => {
    for (const [key, value] of Object.entries(from)) {
      const existing = to[key];
      if (existing && value && typeof existing === 'object' && typeof value === 'object') into(existing as Record<string, unknown>, value as Record<string, unknown>);
      else to[key] = value;
    }
  };
  into(target as Record<string, unknown>, data as Record<string, unknown>);
}

async function* tracedParts(parts: AsyncIterable<IncrementalPart>, trace: (whole: ExecutionResult) => Record<string, unknown>): AsyncGenerator<IncrementalPart> {
  const whole: Record<string, unknown> = {};
  const errors: GraphQLError[] = [];
  for await (const part of parts) {
    if (part.data) mergeAt(whole, [], structuredClone(part.data));
    errors.push(...(part.errors ?? []));
    for (const entry of part.incremental ?? []) {
      if (entry.data) mergeAt(whole, entry.path, structuredClone(entry.data));
      if (entry.items) {
        const list = entry.path.slice(0, -1).reduce<unknown>((at, key) => (at as Record<string | number, unknown> | null)?.[key], whole);
        if (Array.isArray(list)) list.push(...structuredClone(entry.items));
      }
      errors.push(...(entry.errors ?? []));
    }
    if (part.hasNext) yield part;
    else yield { ...part, extensions: { ...part.extensions, ...trace({ data: whole, ...(errors.length > 0 ? { errors } : {}) }) } };
  }
}

export interface TracingOptions {
  production: boolean;
  /** The operation's estimated cost as the complexity limit measured it (limits/operation-limits.ts), and that limit. */
  cost(context: object): { estimated: number | undefined; max: number };
}

// Each subgraph fetch is an entry with parentType "Subgraph", fieldName the subgraph's name, returnType the fetch's
// root field ("_entities" for an entity fetch) and path the field that needed it. Times are nanoseconds from the start
// of execution. extensions.cost is the operation's estimated cost (`@cost`/`@listSize`, limits/operation-limits.ts), the limit it was
// held to, and its actual cost: the same weights over the result as it came back.
//
// Written here rather than taken from @envelop/apollo-tracing, which traces every request (no per-request switch, no
// role check), cannot see subgraph fetches and times graphql-js resolvers, which a query planner does not run: the
// gateway fetches whole subtrees, so each field is timed as the fetch that brought it. Nothing here runs for a request
// that does not ask for a trace.
export function useTracing({ production, cost }: TracingOptions): GatewayPlugin {
  return {
    onExecute({ args }) {
      const context = args.contextValue as { request?: Request; viewer?: Viewer };
      if (!context.request || !wantsTracing(context.request)) return;
      if (production && context.viewer?.role !== 'ADMIN') return;
      const trace: Trace = { startTime: new Date(), start: process.hrtime.bigint(), fetches: [] };
      traces.set(args.contextValue, trace);
      return {
        onExecuteDone({ result, setResult }) {
          if (Symbol.asyncIterator in result) {
            // An answer in parts (@defer): the trace and cost come with the last part, of the parts put together.
            const traceOf = (whole: ExecutionResult) => {
              const traced = buildTrace(trace, args, whole, undefined);
              return { tracing: traced.result.extensions.tracing, cost: { ...cost(args.contextValue), actual: traced.actualCost } };
            };
            setResult(tracedParts(result as AsyncIterable<IncrementalPart>, traceOf));
            return;
          }
          const traced = buildTrace(trace, args, result, queryPlanOf(args.contextValue, args) as PlanNode | undefined);
          setResult({ ...traced.result, extensions: { ...traced.result.extensions, cost: { ...cost(args.contextValue), actual: traced.actualCost } } });
        },
      };
    },
    onSubgraphExecute({ subgraphName, executionRequest }) {
      const trace = executionRequest.context ? traces.get(executionRequest.context) : undefined;
      if (!trace) return;
      const fetch: Fetch = {
        subgraph: subgraphName,
        document: executionRequest.document,
        path: executionRequest.info ? responsePathAsArray(executionRequest.info.path) : undefined,
        startOffset: sinceStart(trace),
        duration: 0,
      };
      trace.fetches.push(fetch);
      return () => {
        fetch.duration = sinceStart(trace) - fetch.startOffset;
      };
    },
  };
}
