// The plugins' hooks around each subgraph call, onSubgraphExecute and onFetch, each kind run as one hook. For each
// hook, on every subgraph call, the runtime builds a payload object with getters and closures (an onFetch payload
// also a logger of its own) and steps its hook chain once: with ours apart, the onSubgraphExecute payloads were
// 5.6-5.9 % of the gateway's sampled allocations under the benchmark's scenario (b), 2.9 % with them as one.
// Hand-written: neither the runtime nor envelop offers to compose hooks of these kinds.
import type { GatewayPlugin, OnFetchHook, OnFetchHookDone } from '@graphql-hive/gateway-runtime';
import { isPromise, type MaybePromise } from '@graphql-tools/utils';

type SubgraphExecuteHook = NonNullable<GatewayPlugin['onSubgraphExecute']>;
type SubgraphExecutePayload = Parameters<SubgraphExecuteHook>[0];
type SubgraphExecuteDone = NonNullable<Exclude<Awaited<ReturnType<SubgraphExecuteHook>>, void>>;
type SubgraphExecuteDoneResult = NonNullable<Exclude<Awaited<ReturnType<SubgraphExecuteDone>>, void>>;
type FetchHook = OnFetchHook<Record<string, unknown>>;
type FetchPayload = Parameters<FetchHook>[0];

/**
 * What each onSubgraphExecute hook is given: the runtime's payload, with the executor and request as the hooks before
 * it left them (each of the runtime's payloads is made when its hook is called, with the values of that moment). A
 * plain object of the payload's type, so a field the runtime adds fails to compile here: one made with the runtime's
 * payload as its prototype cost V8 a new hidden class and a prototype of its own on every call (30 µs of CPU per
 * request under the benchmark's scenario (c)). The setters are own closures, not methods: hooks take them out of the
 * payload. What the runtime computes on demand (the subgraph's schema) is still read only when a hook asks for it.
 */
function sharedExecutePayload(runtime: SubgraphExecutePayload): SubgraphExecutePayload {
  const shared: SubgraphExecutePayload = {
    get subgraph() {
      return runtime.subgraph;
    },
    subgraphName: runtime.subgraphName,
    get transportEntry() {
      return runtime.transportEntry;
    },
    executionRequest: runtime.executionRequest,
    setExecutionRequest: (executionRequest) => {
      shared.executionRequest = executionRequest;
      runtime.setExecutionRequest(executionRequest);
    },
    executor: runtime.executor,
    setExecutor: (executor) => {
      shared.executor = executor;
      runtime.setExecutor(executor);
    },
    log: runtime.log,
  };
  return shared;
}

/** The same for onFetch hooks: fetch function, URL and options as the hooks before it left them. */
function sharedFetchPayload(runtime: FetchPayload, endResponse: FetchPayload['endResponse']): FetchPayload {
  const shared: FetchPayload = {
    fetchFn: runtime.fetchFn,
    setFetchFn: (fetchFn) => {
      shared.fetchFn = fetchFn;
      runtime.setFetchFn(fetchFn);
    },
    url: runtime.url,
    // The runtime keeps a URL as text; so does the shared payload.
    setURL: (url) => {
      shared.url = String(url);
      runtime.setURL(url);
    },
    options: runtime.options,
    setOptions: (options) => {
      shared.options = options;
      runtime.setOptions(options);
    },
    context: runtime.context,
    get logger() {
      return runtime.logger;
    },
    info: runtime.info,
    get executionRequest() {
      return runtime.executionRequest;
    },
    endResponse,
  };
  return shared;
}

/** Calls `hooks` from `first` on, in order, collecting what they return; waits only for a hook that returns a promise. */
function runFrom<P, D>(hooks: ((payload: P) => unknown)[], first: number, payload: P, dones: D[], stop: () => boolean): MaybePromise<D[]> {
  for (let index = first; index < hooks.length && !stop(); index++) {
    const done = hooks[index]!(payload) as MaybePromise<D | null | undefined | void>;
    if (isPromise(done)) {
      return done.then((settled) => {
        if (settled) dones.push(settled);
        return runFrom(hooks, index + 1, payload, dones, stop);
      });
    }
    if (done) dones.push(done);
  }
  return dones;
}

const then = <T, R>(value: MaybePromise<T>, next: (value: T) => R): MaybePromise<R> => (isPromise(value) ? value.then(next) as Promise<R> : next(value));

const never = () => false;

/** The done hooks of one subgraph execution as one: in order; what they return for a stream (onNext, onEnd) too. */
function allSubgraphExecuteDone(dones: SubgraphExecuteDone[]): SubgraphExecuteDone | undefined {
  if (dones.length <= 1) return dones[0];
  return (payload) => {
    const results = dones.map((done) => done(payload));
    if (results.every((result) => result == null)) return undefined;
    return Promise.all(results).then((settled) => {
      const streams = settled.filter((result): result is SubgraphExecuteDoneResult => result != null);
      return {
        onNext: (next) => Promise.all(streams.map((stream) => stream.onNext?.(next))).then(() => undefined),
        onEnd: () => Promise.all(streams.map((stream) => stream.onEnd?.())).then(() => undefined),
      } satisfies SubgraphExecuteDoneResult;
    });
  };
}

/** The done hooks of one fetch as one: in order, each seeing the response the ones before it set. */
function allFetchDone(dones: OnFetchHookDone[]): OnFetchHookDone | undefined {
  if (dones.length <= 1) return dones[0];
  return (payload) => {
    let { response } = payload;
    const shared = {
      get response() {
        return response;
      },
      setResponse(replacement: Response) {
        response = replacement;
        payload.setResponse(replacement);
      },
    };
    return then(runFrom<typeof shared, never>(dones, 0, shared, [], never), () => undefined);
  };
}

/** `plugins` with the hooks of `kind` taken out and `merged` in their place: at the place of the last of them. */
function mergeHooks<K extends 'onSubgraphExecute' | 'onFetch'>(
  plugins: GatewayPlugin[],
  kind: K,
  merge: (hooks: NonNullable<GatewayPlugin[K]>[]) => NonNullable<GatewayPlugin[K]>,
): GatewayPlugin[] {
  const hooks = plugins.flatMap((plugin) => (plugin[kind] ? [plugin[kind]] : []));
  if (hooks.length < 2) return plugins;
  const last = plugins.findLastIndex((plugin) => plugin[kind]);
  const merged = merge(hooks);
  return plugins.map((plugin, index) => (plugin[kind] ? { ...plugin, [kind]: index === last ? merged : undefined } : plugin));
}

/**
 * `plugins` with their onSubgraphExecute hooks run as one and their onFetch hooks run as one, each at the place of
 * the last of its kind, in their order. Each hook sees what the hooks before it set (executor and request; fetch
 * function, URL and options; the response, in done hooks), as it did apart. Only the hooks' order among themselves is
 * kept: another plugin's hook that ran between two of them now runs before all of them, so pass only plugins whose
 * hooks make no such assumption (the runtime's own sit outside this list).
 */
export function withSharedSubgraphHooks(plugins: GatewayPlugin[]): GatewayPlugin[] {
  const executing = mergeHooks(plugins, 'onSubgraphExecute', (hooks) => (payload) =>
    then(runFrom<SubgraphExecutePayload, SubgraphExecuteDone>(hooks, 0, sharedExecutePayload(payload), [], never), allSubgraphExecuteDone),
  );
  return mergeHooks(executing, 'onFetch', (hooks) => (runtimePayload) => {
    // A hook that ends the call with its own response (endResponse) is the last to run.
    let ended = false;
    const payload = sharedFetchPayload(runtimePayload as FetchPayload, (response) => {
      ended = true;
      runtimePayload.endResponse(response);
    });
    return then(runFrom<FetchPayload, OnFetchHookDone>(hooks as FetchHook[], 0, payload, [], () => ended), (dones) => (ended ? undefined : allFetchDone(dones)));
  });
}
