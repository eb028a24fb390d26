// The plugins' onSubgraphExecute and onFetch hooks, one of each kind: called as the runtime calls a hook (the runtime's
// payloads are plain objects here, made as fusion-runtime and the gateway runtime make them); the gateway's e2e suites
// run them for real.
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';
import type { Executor } from '@graphql-tools/utils';
import { describe, expect, it } from 'vitest';
import { withSharedSubgraphHooks } from '../../src/execution/subgraph-hooks.js';

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
  const result = withSharedSubgraphHooks(plugins);
  const hooks = result.filter((plugin) => plugin.onSubgraphExecute);
  expect(hooks).toHaveLength(1);
  return { result, hook: hooks[0]!.onSubgraphExecute! };
};

describe('the plugins onSubgraphExecute hooks as one', () => {
  it('runs every hook once, in order, at the place of the last; the plugins keep their other hooks', async () => {
    const calls: string[] = [];
    const onRequest = () => undefined;
    const plugins: GatewayPlugin[] = [
      { onSubgraphExecute: () => void calls.push('first') },
      { onRequest },
      { onSubgraphExecute: ({ subgraphName }) => void calls.push(`second ${subgraphName}`), onRequest },
      { onSubgraphExecute: () => void calls.push('third') },
      { onFetch: () => undefined },
    ];
    const { result, hook } = merged(plugins);
    expect(result.map((plugin) => !!plugin.onSubgraphExecute)).toEqual([false, false, false, true, false]);
    expect(result[1]).toBe(plugins[1]);
    expect(result[2]!.onRequest).toBe(onRequest);
    expect(await hook(runtimePayload().payload)).toBeUndefined();
    expect(calls).toEqual(['first', 'second catalog', 'third']);
  });

  it('leaves a list with fewer than two such hooks as it is', () => {
    const plugins: GatewayPlugin[] = [{ onSubgraphExecute: () => undefined }, { onFetch: () => undefined }];
    expect(withSharedSubgraphHooks(plugins)).toBe(plugins);
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

type FetchHook = NonNullable<GatewayPlugin['onFetch']>;
type FetchPayload = Parameters<FetchHook>[0];
type FetchDone = Exclude<Awaited<ReturnType<FetchHook>>, void>;

/** A payload as the gateway runtime makes one for an onFetch hook: the values of that moment, and setters of its own. */
function runtimeFetchPayload() {
  const baseFetch = (async () => new Response('base')) as unknown as FetchPayload['fetchFn'];
  const state = { fetchFn: baseFetch, url: 'http://catalog/graphql', options: { method: 'POST' }, ended: undefined as unknown };
  const payload = {
    ...state,
    setFetchFn: (fetchFn: FetchPayload['fetchFn']) => void (state.fetchFn = fetchFn),
    setURL: (url: URL | string) => void (state.url = String(url)),
    setOptions: (options: FetchPayload['options']) => void (state.options = options as typeof state.options),
    endResponse: (response: unknown) => void (state.ended = response),
    context: {},
    logger: {},
    info: {},
    executionRequest: { document: { kind: 'Document', definitions: [] } },
  } as unknown as FetchPayload;
  return { payload, state };
}

const mergedFetch = (plugins: GatewayPlugin[]) => {
  const result = withSharedSubgraphHooks(plugins);
  const hooks = result.filter((plugin) => plugin.onFetch);
  expect(hooks).toHaveLength(1);
  return { result, hook: hooks[0]!.onFetch! };
};

describe('the plugins onFetch hooks as one', () => {
  it('runs every hook once, in order, at the place of the last, each seeing the fetch function, URL and options the ones before it set', async () => {
    const calls: string[] = [];
    const wrapped = (async () => new Response('wrapped')) as unknown as FetchPayload['fetchFn'];
    const { result, hook } = mergedFetch([
      { onFetch: ({ setFetchFn, setURL }) => (calls.push('first'), setFetchFn(wrapped), setURL(new URL('http://catalog:4003/graphql'))) },
      { onSubgraphExecute: () => undefined },
      { onFetch: ({ fetchFn, url, setOptions }) => (calls.push(`second ${url}`), expect(fetchFn).toBe(wrapped), setOptions({ method: 'GET' })) },
      { onFetch: ({ options, executionRequest }) => void calls.push(`third ${options.method} ${executionRequest ? 'with' : 'without'} request`) },
    ]);
    expect(result.map((plugin) => !!plugin.onFetch)).toEqual([false, false, false, true]);
    const { payload, state } = runtimeFetchPayload();
    expect(await hook(payload)).toBeUndefined();
    expect(calls).toEqual(['first', 'second http://catalog:4003/graphql', 'third GET with request']);
    expect(state).toMatchObject({ fetchFn: wrapped, url: 'http://catalog:4003/graphql', options: { method: 'GET' } });
  });

  it('stops at a hook that ends the call with its own response: no later hook, no done hook', async () => {
    const calls: string[] = [];
    const answer = new Response('from the hook');
    const { hook } = mergedFetch([
      { onFetch: () => () => void calls.push('done') },
      { onFetch: ({ endResponse }) => endResponse(answer) },
      { onFetch: () => void calls.push('after') },
    ]);
    const { payload, state } = runtimeFetchPayload();
    expect(await hook(payload)).toBeUndefined();
    expect(state.ended).toBe(answer);
    expect(calls).toEqual([]);
  });

  it('calls the done hooks in order, each seeing the response the ones before it set', async () => {
    const seen: string[] = [];
    const replaced = new Response(null, { status: 503 });
    const { hook } = mergedFetch([
      { onFetch: () => async ({ response, setResponse }) => (seen.push(`a ${response.status}`), setResponse(replaced)) },
      { onFetch: () => ({ response }) => void seen.push(`b ${response.status}`) },
    ]);
    const done = (await hook(runtimeFetchPayload().payload)) as FetchDone;
    let response = new Response('{}', { status: 200 });
    await done({ response, setResponse: (next) => void (response = next) });
    expect(seen).toEqual(['a 200', 'b 503']);
    expect(response).toBe(replaced);
  });
});
