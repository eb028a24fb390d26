// The warm-up of a reloaded supergraph's query plans: the gateway counts the operations it executes, and plans the
// most used of them on each new supergraph before that supergraph takes traffic (Apollo Router's warm-up, Cosmo's and
// Grafbase's warm_on_reload), so that the first requests after a deploy do not each wait for a plan of their own.
import { setImmediate as turn } from 'node:timers/promises';
import type { UnifiedGraphHandler } from '@graphql-hive/gateway-runtime';
import type { Logger } from '@ordergraph/core';
import { getOperationAST, isEnumType, Kind, validate, type DocumentNode, type GraphQLSchema } from 'graphql';
import { Counter, Histogram, type Registry } from 'prom-client';
import { deliversIncrementally } from './defer.js';
import { printedOnce } from './operation.js';

export interface WarmupSettings {
  /** How many of the most used operations are planned on a new supergraph; 0 counts none and plans none. */
  operations: number;
  /** How long the warm-up may hold the switch back; plans still running then finish into the cache in the background. */
  timeoutMs: number;
}

/** One operation as the planner's cache keys it: a document and the operation name the request gave. */
interface CountedOperation {
  /** The document object requests carry: the planner caches plans per object (Yoga's parse cache shares one per text). */
  document: DocumentNode;
  operationName: string | undefined;
  uses: number;
  /** Pruned from the ranking; its document's entry is replaced on its next use. */
  dropped: boolean;
}

/**
 * The operations executed, each with its uses, bounded: past twice `capacity` the least used are dropped, so a client
 * sending a new document each time cannot grow it, nor push out the operations in real use.
 */
export class OperationUsage {
  private readonly byText = new Map<string, CountedOperation>();
  private readonly byDocument = new WeakMap<DocumentNode, Map<string, CountedOperation>>();

  constructor(private readonly capacity: number) {}

  record(document: DocumentNode, operationName: string | null | undefined): void {
    const name = operationName ?? '';
    let named = this.byDocument.get(document);
    const known = named?.get(name);
    if (known && !known.dropped) {
      known.uses++;
      return;
    }
    // A document object not seen yet: printed once (the same text parsed again is the same operation).
    const key = `${name}\n${printedOnce(document)}`;
    let counted = this.byText.get(key);
    if (counted) counted.document = document;
    else {
      counted = { document, operationName: operationName ?? undefined, uses: 0, dropped: false };
      this.byText.set(key, counted);
      if (this.byText.size > this.capacity * 2) this.prune();
    }
    counted.uses++;
    if (!named) this.byDocument.set(document, (named = new Map()));
    named.set(name, counted);
  }

  /** The `count` most used, most used first. */
  top(count: number): CountedOperation[] {
    return [...this.byText.values()].sort((a, b) => b.uses - a.uses).slice(0, count);
  }

  /** Halves every count, so that what was used before one deploy gives way, over the next ones, to what is used now. */
  age(): void {
    for (const counted of this.byText.values()) counted.uses = Math.ceil(counted.uses / 2);
  }

  private prune(): void {
    const ranked = [...this.byText.entries()].sort(([, a], [, b]) => b.uses - a.uses);
    for (const [key, counted] of ranked.slice(this.capacity)) {
      counted.dropped = true;
      this.byText.delete(key);
    }
  }
}

/** What the Rust planner's handler offers beyond the runtime's interface (patches/@graphql-hive+router-runtime+1.4.23.patch). */
interface PlanningHandlerResult {
  /** Plans an operation into the cache executions read, without executing it. */
  planOperation?(document: DocumentNode, operationName: string | undefined): Promise<void>;
}

/** A document whose every root field is an introspection one: answered from the schema, never planned. */
const onlyIntrospection = (document: DocumentNode, operationName: string | undefined) =>
  getOperationAST(document, operationName)?.selectionSet.selections.every((selection) => selection.kind === 'Field' && selection.name.value.startsWith('__')) ?? true;

/** One subgraph's name in a supergraph: a value of its join__Graph enum, `@join__graph(name: "...")`. */
function aSubgraphName(supergraph: GraphQLSchema): string | undefined {
  const graphs = supergraph.getType('join__Graph');
  if (!isEnumType(graphs)) return undefined;
  for (const value of graphs.getValues()) {
    const name = value.astNode?.directives?.find((directive) => directive.name.value === 'join__graph')?.arguments?.find((argument) => argument.name.value === 'name')?.value;
    if (name?.kind === Kind.STRING) return name.value;
  }
  return undefined;
}

/**
 * Builds what router-runtime builds on a supergraph's first subgraph call, and then keeps: every subgraph's schema and
 * transforms, made by stitching the whole supergraph (handleFederationSupergraph), on the event loop. Built on the
 * first call, it held every request then in flight (20-45 ms for this repository's three subgraphs); built here, before
 * the switch. Returns how long it took; 0 when there was nothing to build.
 */
function buildSubgraphSchemas(handled: { getSubgraphSchema(name: string): unknown }, supergraph: GraphQLSchema): number {
  const name = aSubgraphName(supergraph);
  if (!name) return 0;
  const started = performance.now();
  try {
    handled.getSubgraphSchema(name);
  } catch {
    // Built or not, the first subgraph call meets the same and reports it.
  }
  return Math.round(performance.now() - started);
}

/**
 * Operations planned at once: one. Its validation runs on the event loop, its plan off it (planAsync, on a thread of
 * the planner's), so the warm-up takes at most one core from the requests the previous supergraph still serves.
 */
const CONCURRENCY = 1;

export interface WarmupOutcome {
  planned: number;
  /** No longer valid on the new supergraph (a field removed, a type renamed): skipped, not an error. */
  invalid: number;
  /** Refused by the planner. */
  failed: number;
  /** Not started, or still planning, when the time bound passed. */
  unfinished: number;
  durationMs: number;
}

/**
 * Plans `operations` on a supergraph (its schema, its planner) within `timeoutMs`: each validated first against the
 * schema, so an operation the new supergraph no longer serves is skipped. Never throws.
 */
export async function warmPlans(
  operations: readonly { document: DocumentNode; operationName: string | undefined }[],
  schema: GraphQLSchema,
  plan: (document: DocumentNode, operationName: string | undefined) => Promise<void>,
  timeoutMs: number,
): Promise<WarmupOutcome> {
  const started = performance.now();
  const outcome = { planned: 0, invalid: 0, failed: 0 };
  let next = 0;
  let timedOut = false;
  const worker = async () => {
    while (!timedOut && next < operations.length) {
      const { document, operationName } = operations[next++]!;
      if (validate(schema, document).length > 0) outcome.invalid++;
      else {
        try {
          await plan(document, operationName);
          outcome.planned++;
        } catch {
          outcome.failed++;
        }
      }
      // Requests still served by the previous supergraph get their turn between two validations.
      await turn();
    }
  };
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      timedOut = true;
      resolve();
    }, timeoutMs);
  });
  await Promise.race([Promise.all(Array.from({ length: CONCURRENCY }, worker)), bound]);
  clearTimeout(timer);
  const settled = outcome.planned + outcome.invalid + outcome.failed;
  return { ...outcome, unfinished: operations.length - settled, durationMs: Math.round(performance.now() - started) };
}

/**
 * The planner's handler, wrapped: each execution's operation is counted (persisted documents too: they execute as the
 * document they stand for), and every supergraph built after the first gets its plan cache filled with the
 * `settings.operations` most used, before the runtime switches to it (it awaits this handler). Every plan cache lookup
 * of an execution is counted (`gateway_query_plan_cache_total`), warm-up or not. The JavaScript planner keeps no plan
 * cache: nothing is warmed on it.
 */
export function withPlanWarmup(handler: UnifiedGraphHandler, settings: WarmupSettings, logger: Logger, registry: Registry): UnifiedGraphHandler {
  const lookups = new Counter({
    name: 'gateway_query_plan_cache_total',
    help: 'Query plan cache lookups of executions, by result (hit or miss); on the Rust planner',
    labelNames: ['result'],
    registers: [registry],
  });
  const warmed = new Counter({
    name: 'gateway_supergraph_warmup_operations_total',
    help: 'Operations planned on a reloaded supergraph before it served, by outcome (planned, invalid, failed, unfinished)',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'gateway_supergraph_warmup_duration_seconds',
    help: 'How long each warm-up of a reloaded supergraph held its switch back',
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const onQueryPlanCache = (hit: boolean) => lookups.inc({ result: hit ? 'hit' : 'miss' });
  const usage = new OperationUsage(Math.max(settings.operations * 4, 100));
  let generations = 0;

  return async (options) => {
    // Object.assign: the option is the patch's, not in the runtime's type.
    const handled = await handler(Object.assign({}, options, { onQueryPlanCache }));
    const planOperation = (handled as PlanningHandlerResult).planOperation;
    const executor = handled.executor;
    if (settings.operations === 0 || !planOperation || !executor) return handled;
    if (generations++ > 0) {
      const started = performance.now();
      const subgraphsMs = buildSubgraphSchemas(handled, options.unifiedGraph);
      const operations = usage.top(settings.operations * 2).filter((counted) => !onlyIntrospection(counted.document, counted.operationName)).slice(0, settings.operations);
      usage.age();
      const outcome = await warmPlans(operations, handled.unifiedGraph, planOperation, settings.timeoutMs);
      for (const key of ['planned', 'invalid', 'failed', 'unfinished'] as const) warmed.inc({ outcome: key }, outcome[key]);
      const durationMs = Math.round(performance.now() - started);
      duration.observe(durationMs / 1000);
      logger.info(
        { warmup: { ...outcome, durationMs, plansMs: outcome.durationMs, subgraphsMs, operations: operations.length, limit: settings.operations, timeoutMs: settings.timeoutMs } },
        'query plans warmed on the new supergraph before it serves',
      );
    }
    return {
      ...handled,
      executor: (request) => {
        // A deferred operation runs on the JavaScript planner (defer.ts), which caches no plan.
        if (!deliversIncrementally(request.document, request.variables)) usage.record(request.document, request.operationName);
        return executor(request);
      },
    };
  };
}
