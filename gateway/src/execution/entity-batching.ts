// Entity fetches of subscription events, batched across streams: the `_entities` calls that streams of different
// selections or variables make to one subgraph for an event leave as one request per caller credential.
import type { UnifiedGraphHandler } from '@graphql-hive/gateway-runtime';
import { createBatchingExecutor } from '@graphql-tools/batch-execute';
import { getOperationASTFromRequest, type ExecutionRequest, type Executor, type MaybeAsyncIterable, type MaybePromise } from '@graphql-tools/utils';
import type { ExecutionResult } from 'graphql';
import { printedOnce } from './operation.js';
import { callerHeaders } from '../subgraphs/upstream.js';

export interface EntityBatchSettings {
  /** ms a stream's entity fetch waits for other streams' (0: no wait, the fetches of the same tick are merged). */
  windowMs: number;
  /** Fetches merged into one request at most. */
  maxBatchSize: number;
}

type Called = MaybePromise<MaybeAsyncIterable<ExecutionResult>>;
type SubgraphExecute = (subgraphName: string, request: ExecutionRequest) => Called;

/** The fetches to one subgraph with one credential collected during one window, and those of them already asked. */
interface Window {
  execute: Executor;
  asked: Map<string, Called>;
}

const isResult = (value: unknown): value is ExecutionResult => typeof value === 'object' && value !== null && !(Symbol.asyncIterator in value);

/**
 * Wraps the planner (either) so that its subgraph calls pass through here before any plugin sees them. Each shared
 * stream (subscriptions/sharing.ts) executes every event on its own, so streams of different operations, variables or
 * visibility each fetch an event's `user` and `items { product }` from users and catalog. An event reaches all its
 * streams in one burst: the fetches that reach one subgraph in the same tick (or within `windowMs` of each other),
 * with the same credential, are merged into one operation (each under its own alias: @graphql-tools/batch-execute's
 * merge, whose split hands every stream its own part and errors) and identical ones are asked once. The merged call
 * then passes every subgraph plugin as one call: it is signed, timed, retried and counted by the circuit breaker once.
 *
 * Not the runtime's own `__experimental__batchExecution`: it batches only the calls of one execution (its DataLoader
 * is keyed by the operation's context, one per stream) and caches every request for as long as that context lives,
 * which for a subscription is its whole life (graphql-hive/gateway#1085). Here a window's loader is dropped when it is
 * sent, and nothing is cached.
 *
 * Calls of different credentials are never merged: a subgraph authorises a call by its caller's token, and a merged
 * call carries one. Only queries of a subscription's execution are batched; queries and mutations over HTTP go out as
 * they come, their identical calls shared by useQueryCancellation (upstream.ts).
 */
export function withEntityBatching(handler: UnifiedGraphHandler, settings: EntityBatchSettings): UnifiedGraphHandler {
  /** The contexts of subscription executions: their subgraph queries are an event's entity fetches. */
  const subscriptions = new WeakSet<object>();
  const windows = new Map<string, Window>();

  const open = (key: string, subgraphName: string, execute: SubgraphExecute): Window => {
    const window: Window = {
      asked: new Map(),
      execute: createBatchingExecutor(((merged: ExecutionRequest) => execute(subgraphName, merged)) as Executor, {
        cache: false,
        maxBatchSize: settings.maxBatchSize,
        batchScheduleFn: (send) => {
          const close = () => {
            // Fetches from now on start the next window.
            if (windows.get(key) === window) windows.delete(key);
            send();
          };
          // No window: sent once the promise jobs of this tick have run (DataLoader's own schedule), no later.
          if (settings.windowMs > 0) setTimeout(close, settings.windowMs);
          else void Promise.resolve().then(() => process.nextTick(close));
        },
      }),
    };
    windows.set(key, window);
    return window;
  };

  const batched = (execute: SubgraphExecute): SubgraphExecute => (subgraphName, request) => {
    const context = request.context as { request?: Request } | undefined;
    if (request.operationType !== 'query' || !context || !subscriptions.has(context) || !context.request) return execute(subgraphName, request);
    const key = `${subgraphName}|${JSON.stringify(callerHeaders(context.request))}`;
    const window = windows.get(key) ?? open(key, subgraphName, execute);
    const identity = `${printedOnce(request.document)}|${request.operationName ?? ''}|${JSON.stringify(request.variables ?? {})}`;
    const asked = window.asked.get(identity);
    if (!asked) {
      const result = window.execute(request) as Called;
      window.asked.set(identity, result);
      return result;
    }
    // The planner merges the entities it gets into its own result: each stream gets data of its own.
    return Promise.resolve(asked).then((result) => (isResult(result) ? { ...result, data: structuredClone(result.data) } : result));
  };

  return async (options) => {
    const handled = await handler({ ...options, onSubgraphExecute: batched(options.onSubgraphExecute as SubgraphExecute) as typeof options.onSubgraphExecute });
    const executor = handled.executor;
    if (!executor) return handled;
    return {
      ...handled,
      executor: (request: ExecutionRequest) => {
        const operation = request.operationType ?? getOperationASTFromRequest(request)?.operation;
        if (operation === 'subscription' && request.context) subscriptions.add(request.context as object);
        return executor(request);
      },
    };
  };
}
