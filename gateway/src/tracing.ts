// Apollo tracing (DESIGN section 5): `X-Ordergraph-Tracing: 1` (or the older `X-Apollo-Tracing: 1`) adds
// extensions.tracing in the Apollo tracing format: every resolver the gateway ran, and every subgraph fetch as an entry
// with parentType "Subgraph", fieldName the subgraph's name, returnType the fetch's root field ("_entities" for an
// entity fetch) and path the field that needed it. Times are nanoseconds from the start of execution. Honoured for
// everyone outside production, for ADMIN only in production.
//
// Written here on @envelop/on-resolve rather than taken from @envelop/apollo-tracing, which traces every request (no
// per-request switch, no role check), cannot see subgraph fetches and depends on the deprecated apollo-tracing package.
import { useOnResolve } from '@envelop/on-resolve';
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';
import type { Viewer } from '@ordergraph/common';
import { Kind, responsePathAsArray, type GraphQLResolveInfo, type OperationDefinitionNode } from 'graphql';

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

interface Trace {
  startTime: Date;
  start: bigint;
  resolvers: ResolverTrace[];
}

/** Traces by execution context: resolvers and subgraph fetches both see the context of the request they serve. */
const traces = new WeakMap<object, Trace>();

const sinceStart = (trace: Trace) => Number(process.hrtime.bigint() - trace.start);
const pathOf = (info: GraphQLResolveInfo | undefined) => (info ? responsePathAsArray(info.path) : []);

/** Starts timing an entry; the returned function records it. */
function timeEntry(trace: Trace, entry: Omit<ResolverTrace, 'startOffset' | 'duration'>): () => void {
  const startOffset = sinceStart(trace);
  return () => trace.resolvers.push({ ...entry, startOffset, duration: sinceStart(trace) - startOffset });
}

function rootFieldOf(operation: OperationDefinitionNode | undefined): string {
  const first = operation?.selectionSet.selections[0];
  return first?.kind === Kind.FIELD ? first.name.value : (operation?.operation ?? 'query');
}

export function useTracing({ production }: { production: boolean }): GatewayPlugin {
  return {
    onPluginInit({ addPlugin }) {
      addPlugin(
        useOnResolve(
          ({ info, context }) => {
            const trace = traces.get(context);
            if (!trace) return;
            const record = timeEntry(trace, {
              path: pathOf(info),
              parentType: info.parentType.name,
              fieldName: info.fieldName,
              returnType: String(info.returnType),
            });
            return () => record();
          },
          { skipIntrospection: false },
        ),
      );
    },
    onExecute({ args }) {
      const context = args.contextValue as { request?: Request; viewer?: Viewer };
      if (!context.request || !wantsTracing(context.request)) return;
      if (production && context.viewer?.role !== 'ADMIN') return;
      const trace: Trace = { startTime: new Date(), start: process.hrtime.bigint(), resolvers: [] };
      traces.set(args.contextValue, trace);
      return {
        onExecuteDone({ result, setResult }) {
          if (Symbol.asyncIterator in result) return;
          const tracing = {
            version: 1,
            startTime: trace.startTime.toISOString(),
            endTime: new Date().toISOString(),
            duration: sinceStart(trace),
            execution: { resolvers: trace.resolvers },
          };
          setResult({ ...result, extensions: { ...result.extensions, tracing } });
        },
      };
    },
    onSubgraphExecute({ subgraphName, executionRequest }) {
      const trace = executionRequest.context ? traces.get(executionRequest.context) : undefined;
      if (!trace) return;
      const operation = executionRequest.document.definitions.find((definition) => definition.kind === Kind.OPERATION_DEFINITION);
      const record = timeEntry(trace, {
        path: pathOf(executionRequest.info),
        parentType: 'Subgraph',
        fieldName: subgraphName,
        returnType: rootFieldOf(operation),
      });
      return () => record();
    },
  };
}
