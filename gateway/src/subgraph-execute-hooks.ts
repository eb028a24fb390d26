// The plugins' onSubgraphExecute hooks run as one. For each hook, on every subgraph call, the runtime builds a payload
// object with getters and two closures and steps its hook chain once: with ours apart, those payloads were 5.6-5.9 %
// of the gateway's sampled allocations under the benchmark's scenario (b), 2.9 % with them as one. Hand-written:
// neither the runtime nor envelop offers to compose hooks of this kind.
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';
import { isPromise } from '@graphql-tools/utils';

type Hook = NonNullable<GatewayPlugin['onSubgraphExecute']>;
type Payload = Parameters<Hook>[0];
type Done = NonNullable<Exclude<Awaited<ReturnType<Hook>>, void>>;
type DonePayload = Parameters<Done>[0];
type DoneResult = NonNullable<Exclude<Awaited<ReturnType<Done>>, void>>;

/**
 * What each hook is given: the runtime's payload, read through, with the executor and the request as the hooks before
 * it left them (each of the runtime's payloads is made when its hook is called, with the values of that moment). The
 * setters are bound: hooks take them out of the payload.
 */
class SharedPayload {
  executor: Payload['executor'];
  executionRequest: Payload['executionRequest'];
  readonly setExecutor = (executor: Payload['executor']) => {
    this.executor = executor;
    this.payload.setExecutor(executor);
  };
  readonly setExecutionRequest = (executionRequest: Payload['executionRequest']) => {
    this.executionRequest = executionRequest;
    this.payload.setExecutionRequest(executionRequest);
  };
  constructor(private readonly payload: Payload) {
    this.executor = payload.executor;
    this.executionRequest = payload.executionRequest;
  }
  get subgraph() {
    return this.payload.subgraph;
  }
  get subgraphName() {
    return this.payload.subgraphName;
  }
  get transportEntry() {
    return this.payload.transportEntry;
  }
  get log() {
    return this.payload.log;
  }
}

/** The done hooks of one call as one: in order; what they return for a stream (onNext, onEnd) is composed too. */
function allDone(dones: Done[]): Done {
  if (dones.length === 1) return dones[0]!;
  return (payload: DonePayload) => {
    const results = dones.map((done) => done(payload));
    if (results.every((result) => result == null)) return undefined;
    return Promise.all(results).then((settled) => {
      const streams = settled.filter((result): result is DoneResult => result != null);
      return {
        onNext: (next) => Promise.all(streams.map((stream) => stream.onNext?.(next))).then(() => undefined),
        onEnd: () => Promise.all(streams.map((stream) => stream.onEnd?.())).then(() => undefined),
      } satisfies DoneResult;
    });
  };
}

/** Runs `hooks` from `first` on, in order, with one shared payload; waits only for a hook that returns a promise. */
function runFrom(hooks: Hook[], first: number, payload: SharedPayload, dones: Done[]): ReturnType<Hook> {
  for (let index = first; index < hooks.length; index++) {
    const done = hooks[index]!(payload as unknown as Payload);
    if (isPromise(done)) {
      return done.then((settled) => {
        if (settled) dones.push(settled);
        return runFrom(hooks, index + 1, payload, dones);
      });
    }
    if (done) dones.push(done);
  }
  return dones.length > 0 ? allDone(dones) : undefined;
}

/**
 * `plugins` with their onSubgraphExecute hooks taken out and run as one hook, at the place of the last of them, in
 * their order. Each hook sees the executor and the request the hooks before it set, as it did apart. Only the hooks'
 * order among themselves is kept: another plugin's hook that ran between two of them now runs before all of them, so
 * pass only plugins whose hooks make no such assumption (the runtime's own sit outside this list).
 */
export function withOneSubgraphExecuteHook(plugins: GatewayPlugin[]): GatewayPlugin[] {
  const hooks = plugins.flatMap((plugin) => (plugin.onSubgraphExecute ? [plugin.onSubgraphExecute] : []));
  if (hooks.length < 2) return plugins;
  const last = plugins.findLastIndex((plugin) => plugin.onSubgraphExecute);
  const onSubgraphExecute: Hook = (payload) => runFrom(hooks, 0, new SharedPayload(payload), []);
  return plugins.map((plugin, index) =>
    plugin.onSubgraphExecute ? { ...plugin, onSubgraphExecute: index === last ? onSubgraphExecute : undefined } : plugin,
  );
}
