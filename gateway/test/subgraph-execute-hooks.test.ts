// The plugins' onSubgraphExecute hooks as one: called as the runtime calls a hook (the runtime's payload and done
// payload are plain objects here, made as fusion-runtime makes them); the gateway's e2e suites run it for real.
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';
import type { Executor } from '@graphql-tools/utils';
import { describe, expect, it } from 'vitest';
import { withOneSubgraphExecuteHook } from '../src/subgraph-execute-hooks.js';

type Hook = NonNullable<GatewayPlugin['onSubgraphExecute']>;
type Payload = Parameters<Hook>[0];

const baseExecutor = (() => ({ data: { base: true } })) as Executor;

/** A payload as the runtime makes one for a hook: the executor and request of that moment, and setters of its own. */
function runtimePayload() {
  const state = { executor: baseExecutor, executionRequest: { document: { kind: 'Document', definitions: [] } } as unknown as Payload['executionRequest'] };
  const payload = {
    subgraphName: 'catalog',
    get subgraph() {
      throw new Error('read only when asked for');
    },
    executor: state.executor,
    executionRequest: state.executionRequest,
    setExecutor: (executor: Executor) => void (state.executor = executor),
    setExecutionRequest: (request: Payload['executionRequest']) => void (state.executionRequest = request),
    log: {},
  } as unknown as Payload;
  return { payload, state };
}

const merged = (plugins: GatewayPlugin[]) => {
  const result = withOneSubgraphExecuteHook(plugins);
  const hooks = result.filter((plugin) => plugin.onSubgraphExecute);
  expect(hooks).toHaveLength(1);
  return { result, hook: hooks[0]!.onSubgraphExecute! };
};

describe('the plugins onSubgraphExecute hooks as one', () => {
  it('runs every hook once, in order, at the place of the last; the plugins keep their other hooks', async () => {
    const calls: string[] = [];
    const onFetch = () => undefined;
    const plugins: GatewayPlugin[] = [
      { onSubgraphExecute: () => void calls.push('first') },
      { onFetch },
      { onSubgraphExecute: ({ subgraphName }) => void calls.push(`second ${subgraphName}`), onFetch },
      { onSubgraphExecute: () => void calls.push('third') },
      { onRequest: () => undefined },
    ];
    const { result, hook } = merged(plugins);
    expect(result.map((plugin) => !!plugin.onSubgraphExecute)).toEqual([false, false, false, true, false]);
    expect(result[1]).toBe(plugins[1]);
    expect(result[2]!.onFetch).toBe(onFetch);
    expect(await hook(runtimePayload().payload)).toBeUndefined();
    expect(calls).toEqual(['first', 'second catalog', 'third']);
  });

  it('leaves a list with fewer than two such hooks as it is', () => {
    const plugins: GatewayPlugin[] = [{ onSubgraphExecute: () => undefined }, { onFetch: () => undefined }];
    expect(withOneSubgraphExecuteHook(plugins)).toBe(plugins);
  });

  it('shows each hook the executor and request the hooks before it set, and hands both to the runtime', async () => {
    const retried = (() => ({ data: { retried: true } })) as Executor;
    const seen: Executor[] = [];
    const replacement = { document: { kind: 'Document', definitions: [] } } as unknown as Payload['executionRequest'];
    const { hook } = merged([
      { onSubgraphExecute: ({ setExecutor }) => setExecutor(retried) },
      { onSubgraphExecute: ({ setExecutionRequest }) => setExecutionRequest(replacement) },
      {
        onSubgraphExecute: ({ executor, executionRequest, setExecutor }) => {
          seen.push(executor);
          expect(executionRequest).toBe(replacement);
          setExecutor((request) => executor(request));
        },
      },
    ]);
    const { payload, state } = runtimePayload();
    await hook(payload);
    expect(seen).toEqual([retried]);
    expect(await state.executor(state.executionRequest)).toEqual({ data: { retried: true } });
    expect(state.executionRequest).toBe(replacement);
  });

  it('waits for a hook that returns a promise before it calls the next', async () => {
    const calls: string[] = [];
    const { hook } = merged([
      { onSubgraphExecute: () => new Promise<void>((done) => setTimeout(() => (calls.push('slow'), done()), 10)) },
      { onSubgraphExecute: () => void calls.push('next') },
    ]);
    await hook(runtimePayload().payload);
    expect(calls).toEqual(['slow', 'next']);
  });

  it('calls every done hook, in order, with the result; a stream hook of each is called for each part and at its end', async () => {
    const calls: string[] = [];
    const { hook } = merged([
      { onSubgraphExecute: () => ({ result }) => void calls.push(`done a ${JSON.stringify(result)}`) },
      { onSubgraphExecute: () => undefined },
      {
        onSubgraphExecute: () => () => ({
          onNext: ({ result }) => void calls.push(`next ${JSON.stringify(result)}`),
          onEnd: () => void calls.push('end'),
        }),
      },
    ]);
    const done = (await hook(runtimePayload().payload)) as Exclude<Awaited<ReturnType<Hook>>, void | null | undefined>;
    const stream = await done({ result: { data: { n: 0 } }, setResult: () => undefined });
    expect(calls).toEqual(['done a {"data":{"n":0}}']);
    await stream?.onNext?.({ result: { data: { n: 1 } }, setResult: () => undefined });
    await stream?.onEnd?.();
    expect(calls).toEqual(['done a {"data":{"n":0}}', 'next {"data":{"n":1}}', 'end']);
  });

  it('hands the one done hook there is on as it is', async () => {
    const only = () => undefined;
    const { hook } = merged([{ onSubgraphExecute: () => undefined }, { onSubgraphExecute: () => only }]);
    expect(await hook(runtimePayload().payload)).toBe(only);
  });
});
