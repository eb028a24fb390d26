// The subgraph call timeout: a call that answers leaves nothing listening or waiting behind it, one that does not is
// cut at its timeout with the code the error policy maps to SUBGRAPH_TIMEOUT, and its query cancelled at the subgraph.
// The calls useQueryCancellation lets through: one listener on each signal they wait on, freed by the transport's
// disposal.
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';
import { createLogger } from '@ordergraph/core';
import { GraphQLError, parse, type DocumentNode } from 'graphql';
import { upstreams, useQueryCancellation } from '../../src/subgraphs/upstream.js';

const settings = { timeoutMs: 50, timeoutBySubgraph: { orders: 20 }, retries: 0, retryDelayMs: 0, breakerFailures: 100, breakerResetMs: 1_000 };
type SubgraphExecutePayload = Parameters<NonNullable<GatewayPlugin['onSubgraphExecute']>>[0];
/** A subgraph call as the plugin sees it (the runtime's executor type is generic over every request it may carry). */
type Call = (request: { document: DocumentNode; signal?: AbortSignal }) => unknown;

/** The executor the call policy (the circuit breaker around the timeout) puts around `inner` for a call of `subgraph`. */
function timed(inner: Call, subgraph = 'catalog', document = parse('{ product(id: "p-1") { id } }')): Call {
  const policy = upstreams(settings, createLogger('upstream-test', 'silent')).plugins[1]!;
  let wrapped: Call | undefined;
  const payload = { subgraphName: subgraph, executionRequest: { document }, executor: inner, setExecutor: (executor: Call) => (wrapped = executor) };
  void policy.onSubgraphExecute?.(payload as unknown as SubgraphExecutePayload);
  return wrapped!;
}

describe('the subgraph call timeout', () => {
  it('passes the request on as it came: no signal of its own for the HTTP executor to join to its transport\'s', async () => {
    const request = { document: parse('{ product(id: "p-1") { id } }') };
    let seen: Parameters<Call>[0] | undefined;
    const executor = timed((given) => {
      seen = given;
      return Promise.resolve({ data: { product: { id: 'p-1' } } });
    });
    await expect(executor(request)).resolves.toEqual({ data: { product: { id: 'p-1' } } });
    expect(seen).toBe(request);
    expect(seen?.signal).toBeUndefined();
  });

  it('cuts a call at its subgraph\'s timeout with GATEWAY_TIMEOUT, and cancels its query at the subgraph', async () => {
    // The inner executor stands for the HTTP executor: it sends the query through the fetch useQueryCancellation
    // gives it, as the runtime's onFetch hooks do; the fetch never answers.
    const cancellation = useQueryCancellation();
    const body = JSON.stringify({ query: '{ orders { id } }' });
    let sent: AbortSignal | undefined;
    const executor = timed((request) => {
      let fetchFn = (_url: string, init: RequestInit) => {
        sent = init.signal ?? undefined;
        return new Promise<Response>(() => {});
      };
      void cancellation.onFetch?.({ options: { body }, context: {}, executionRequest: request, fetchFn, setFetchFn: (given: typeof fetchFn) => (fetchFn = given) } as never);
      return fetchFn('http://orders/graphql', { method: 'POST', body });
    }, 'orders', parse('{ orders { id } }'));
    const started = Date.now();
    // The breaker hands the failure back as a result, so that the planner places it on the subgraph's fields.
    const { errors } = (await executor({ document: parse('{ orders { id } }') })) as { errors: unknown[] };
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(GraphQLError);
    expect((errors[0] as GraphQLError).extensions).toMatchObject({ code: 'GATEWAY_TIMEOUT', serviceName: 'orders' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(15);
    expect(sent?.aborted).toBe(true);
  });

  it('keeps the client\'s own signal: a call the client abandons is aborted too', async () => {
    const client = new AbortController();
    let seen: AbortSignal | undefined;
    const executor = timed((request) => {
      seen = request.signal;
      return new Promise((_, reject) => request.signal!.addEventListener('abort', () => reject(request.signal!.reason)));
    });
    const result = Promise.resolve(executor({ document: parse('{ product(id: "p-1") { id } }'), signal: client.signal })).catch((error: unknown) => error);
    client.abort(new Error('client went away'));
    expect(((await result) as Error).message).toBe('client went away');
    expect(seen?.aborted).toBe(true);
  });

  it('gives subscriptions no timeout', async () => {
    // Three times the orders subgraph's 20 ms.
    const executor = timed(() => new Promise((resolve) => setTimeout(() => resolve({ data: {} }), 60)), 'orders', parse('subscription { orderUpdated { id } }'));
    await expect(executor({ document: parse('subscription { orderUpdated { id } }') })).resolves.toEqual({ data: {} });
  });
});

describe('the calls useQueryCancellation lets through', () => {
  /** A fetch through the plugin, as the HTTP executor makes it: with its transport's dispose signal. */
  function fetchThrough(send: (init: RequestInit) => Promise<Response>, dispose: AbortSignal, client?: AbortSignal, cancellation = useQueryCancellation()) {
    return (body: string) => {
      let fetchFn = (_url: string, init: RequestInit) => send(init);
      const context = client ? { request: { signal: client } } : {};
      void cancellation.onFetch?.({ options: { body }, context, executionRequest: { document: parse('{ orders { id } }') }, fetchFn, setFetchFn: (given: typeof fetchFn) => (fetchFn = given) } as never);
      return fetchFn('http://orders/graphql', { method: 'POST', body, signal: dispose, headers: { authorization: 'Bearer t' } });
    };
  }

  it('hang one listener on each signal they wait on, however many calls wait, and leave no waiter behind', async () => {
    const dispose = new AbortController();
    const client = new AbortController();
    const answering = Promise.withResolvers<void>();
    const fetch = fetchThrough(async (init) => (await answering.promise, new Response(String(init.body))), dispose.signal, client.signal);
    const answers = Array.from({ length: 50 }, (_, index) => fetch(JSON.stringify({ query: `{ order(id: ${index}) { id } }` })));
    await new Promise((resolve) => setImmediate(resolve));
    // Node's addEventListener walks a signal's listeners: one per waiting call made every call pay for all the others.
    expect(getEventListeners(dispose.signal, 'abort')).toHaveLength(1);
    expect(getEventListeners(client.signal, 'abort')).toHaveLength(1);
    answering.resolve();
    const bodies = await Promise.all((await Promise.all(answers)).map((answer) => answer.text()));
    expect(bodies[7]).toBe(JSON.stringify({ query: '{ order(id: 7) { id } }' }));
    // Every waiter gone: aborting now frees nobody, and throws nowhere.
    client.abort(new Error('left late'));
    dispose.abort(new Error('disposed late'));
  });

  it('free their callers when the transport is disposed, and cancel the call', async () => {
    const dispose = new AbortController();
    let sent: AbortSignal | undefined;
    const fetch = fetchThrough((init) => {
      sent = init.signal ?? undefined;
      return new Promise<Response>(() => {});
    }, dispose.signal);
    const body = JSON.stringify({ query: '{ orders { id } }' });
    const waiting = [fetch(body), fetch(body)].map((answer) => answer.catch((error: unknown) => error));
    dispose.abort(new Error('disposed'));
    for (const error of await Promise.all(waiting)) expect((error as Error).message).toBe('disposed');
    expect(sent?.aborted).toBe(true);
  });

  it('share a query in flight, but never one sent before a write since answered (read-your-writes)', async () => {
    const cancellation = useQueryCancellation();
    const sent: ((response: Response) => void)[] = [];
    const fetch = fetchThrough(() => new Promise<Response>((resolve) => sent.push(resolve)), new AbortController().signal, undefined, cancellation);
    const body = JSON.stringify({ query: '{ orders { id status } }' });
    const before = [fetch(body), fetch(body)];
    await new Promise((resolve) => setImmediate(resolve));
    expect(sent).toHaveLength(1);
    // A write's execution ends (its answer about to leave); the next identical query is sent anew.
    const write = cancellation.onExecute?.({ args: { document: parse('mutation { cancelOrder(id: "o-1") { id } }') } } as never) as { onExecuteDone?: () => void } | undefined;
    write?.onExecuteDone?.();
    const after = fetch(body);
    await new Promise((resolve) => setImmediate(resolve));
    expect(sent).toHaveLength(2);
    sent[0]!(new Response('before'));
    sent[1]!(new Response('after'));
    expect(await Promise.all([...before, after].map(async (answer) => (await answer).text()))).toEqual(['before', 'before', 'after']);
    // A query's execution counts as no write.
    expect(cancellation.onExecute?.({ args: { document: parse('{ orders { id } }') } } as never)).toBeUndefined();
  });
});
