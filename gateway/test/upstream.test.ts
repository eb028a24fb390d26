// The subgraph call timeout on its own: a call that answers leaves nothing listening or waiting behind it, one that
// does not is cut at its timeout with the code the error policy maps to SUBGRAPH_TIMEOUT.
import { describe, expect, it } from 'vitest';
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';
import { createLogger } from '@ordergraph/core';
import { GraphQLError, parse, type DocumentNode } from 'graphql';
import { upstreams } from '../src/upstream.js';

const settings = { timeoutMs: 50, timeoutBySubgraph: { orders: 20 }, retries: 0, retryDelayMs: 0, breakerFailures: 100, breakerResetMs: 1_000 };
type SubgraphExecutePayload = Parameters<NonNullable<GatewayPlugin['onSubgraphExecute']>>[0];
/** A subgraph call as the plugin sees it (the runtime's executor type is generic over every request it may carry). */
type Call = (request: { document: DocumentNode; signal?: AbortSignal }) => unknown;

/** The executor the timeout plugin puts around `inner` for a call of `subgraph`, undefined when it leaves it alone. */
function timed(inner: Call, subgraph = 'catalog', document = parse('{ product(id: "p-1") { id } }')): Call | undefined {
  const timeout = upstreams(settings, createLogger('upstream-test', 'silent')).plugins[1]!;
  let wrapped: Call | undefined;
  const payload = { subgraphName: subgraph, executionRequest: { document }, executor: inner, setExecutor: (executor: Call) => (wrapped = executor) };
  void timeout.onSubgraphExecute?.(payload as unknown as SubgraphExecutePayload);
  return wrapped;
}

describe('the subgraph call timeout', () => {
  it('ends a call that answered: its signal is aborted at once, so nothing stays listening to it', async () => {
    let seen: AbortSignal | undefined;
    const executor = timed((request) => {
      seen = request.signal;
      return Promise.resolve({ data: { product: { id: 'p-1' } } });
    })!;
    await expect(executor({ document: parse('{ product(id: "p-1") { id } }') })).resolves.toEqual({ data: { product: { id: 'p-1' } } });
    expect(seen?.aborted).toBe(true);
    expect((seen?.reason as Error).message).toBe('subgraph call ended');
  });

  it('cuts a call at its subgraph\'s timeout with GATEWAY_TIMEOUT and aborts what it was waiting for', async () => {
    let seen: AbortSignal | undefined;
    const executor = timed((request) => {
      seen = request.signal;
      return new Promise(() => {});
    }, 'orders')!;
    const started = Date.now();
    const failure = await Promise.resolve(executor({ document: parse('{ orders { id } }') })).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(GraphQLError);
    expect((failure as GraphQLError).extensions).toMatchObject({ code: 'GATEWAY_TIMEOUT', serviceName: 'orders' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(15);
    expect(seen?.aborted).toBe(true);
    expect(seen?.reason).toBe(failure);
  });

  it('keeps the client\'s own signal: a call the client abandons is aborted too', async () => {
    const client = new AbortController();
    let seen: AbortSignal | undefined;
    const executor = timed((request) => {
      seen = request.signal;
      return new Promise((_, reject) => request.signal!.addEventListener('abort', () => reject(request.signal!.reason)));
    })!;
    const result = Promise.resolve(executor({ document: parse('{ product(id: "p-1") { id } }'), signal: client.signal })).catch((error: unknown) => error);
    client.abort(new Error('client went away'));
    expect(((await result) as Error).message).toBe('client went away');
    expect(seen?.aborted).toBe(true);
  });

  it('gives subscriptions no timeout', () => {
    expect(timed(() => ({ data: {} }), 'orders', parse('subscription { orderUpdated { id } }'))).toBeUndefined();
  });
});
