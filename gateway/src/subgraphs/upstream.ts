// How the gateway treats its subgraphs when they are slow, down or no longer needed: a timeout per call, retries for
// queries only, a circuit breaker per subgraph, cancellation of abandoned queries, and each subgraph's state for /readyz.
import type { IncomingMessage } from 'node:http';
import { getRetryInfo, isRetryExecutionRequest, useUpstreamRetry, type GatewayPlugin } from '@graphql-hive/gateway-runtime';
import { defaultPrintFn } from '@graphql-tools/executor-common';
import { isAsyncIterable, type ExecutionRequest, type Executor } from '@graphql-tools/utils';
import { ErrorCode, SIGNATURE_EXTENSION, signOperation, signedQueryJson, type Logger } from '@ordergraph/core';
import { GraphQLError, Kind, type DocumentNode, type ExecutionResult, type OperationDefinitionNode } from 'graphql';
import { contextSignalOf, requestSignalOf } from '../shared/request-signals.js';

export interface UpstreamSettings {
  /** ms a subgraph call may take, retries included. */
  timeoutMs: number;
  /** Per-subgraph overrides of timeoutMs. */
  timeoutBySubgraph: Record<string, number>;
  /** Extra attempts for a query whose subgraph could not be reached; mutations and subscriptions are never retried. */
  retries: number;
  retryDelayMs: number;
  /** Consecutive failed calls after which a subgraph's circuit opens (its calls then fail at once). */
  breakerFailures: number;
  /** ms an open circuit waits before one call probes the subgraph again. */
  breakerResetMs: number;
}

export type CircuitState = 'closed' | 'open' | 'half-open';

/** The codes the runtime gives a subgraph call that failed in transport: refused or reset, timed out, not GraphQL. */
export const TRANSPORT_FAILURES = new Set<unknown>(['SUBREQUEST_HTTP_ERROR', 'TIMEOUT_ERROR', 'GATEWAY_TIMEOUT', 'RESPONSE_VALIDATION_FAILED']);
const TIMEOUT_CODES = new Set<unknown>(['TIMEOUT_ERROR', 'GATEWAY_TIMEOUT']);

export const isTimeout = (error: GraphQLError) => TIMEOUT_CODES.has(error.extensions['code']);

const hasOperation = (document: { definitions: readonly { kind: string }[] } | undefined, operation: 'query' | 'mutation' | 'subscription') =>
  document?.definitions.some((definition) => definition.kind === Kind.OPERATION_DEFINITION && (definition as OperationDefinitionNode).operation === operation) ?? false;

function circuitOpen(subgraph: string): GraphQLError {
  return new GraphQLError('A service needed for this request is unavailable', {
    extensions: { code: ErrorCode.SUBGRAPH_UNAVAILABLE, circuit: 'open', subgraph },
  });
}

/**
 * One breaker per subgraph. Hand-written: the runtime bundles opossum for its CDN client but offers no breaker for
 * subgraph calls, and a call's failure here is read from its result (the HTTP transport reports failures as errors).
 */
class Breaker {
  private failures = 0;
  private openedAt: number | undefined;
  private probing = false;

  constructor(private readonly settings: UpstreamSettings) {}

  get state(): CircuitState {
    if (this.openedAt === undefined) return 'closed';
    return Date.now() - this.openedAt >= this.settings.breakerResetMs ? 'half-open' : 'open';
  }

  /** Whether a call may go ahead; in half-open state, only one probe at a time. */
  admit(): boolean {
    const state = this.state;
    if (state === 'closed') return true;
    if (state === 'open' || this.probing) return false;
    this.probing = true;
    return true;
  }

  /** `ok` undefined: the call says nothing about the subgraph (its client left); only a probe slot is given back. */
  record(ok: boolean | undefined): CircuitState | undefined {
    const before = this.state;
    this.probing = false;
    if (ok === undefined) return undefined;
    if (ok) {
      this.failures = 0;
      this.openedAt = undefined;
    } else if (++this.failures >= this.settings.breakerFailures || before === 'half-open') {
      this.openedAt = Date.now();
    }
    const after = this.state;
    return after === before ? undefined : after;
  }
}

/** The error of a call that outlived its timeout: the code the runtime's own timeout gives it (errors.ts maps it). */
function timedOut(subgraph: string, timeoutMs: number): GraphQLError {
  return new GraphQLError(`${subgraph} did not answer within ${timeoutMs} ms`, {
    extensions: { code: 'GATEWAY_TIMEOUT', serviceName: subgraph, http: { status: 504 } },
  });
}

/** A caller waiting on a subgraph call until something frees it first: its client leaving, its timeout, disposal. */
interface Waiter {
  interrupt(reason: unknown): void;
}

/**
 * A subgraph call's timeout as its fetches see it (retries run one after another on the same execution request):
 * useQueryCancellation leaves the call's shared query when it expires, which cancels the query once no caller is left.
 * Not an AbortSignal given to the executor as the request's `signal`: the HTTP executor would join it to its
 * transport's own with @graphql-hive/signal's abortSignalAny, which tracks both by weak references and registers each
 * with a FinalizationRegistry, for every call.
 */
class Expiry {
  reason: GraphQLError | undefined;
  /** One at a time: a call's fetches run one after another. */
  waiter: Waiter | undefined;

  get aborted(): boolean {
    return this.reason !== undefined;
  }

  expire(reason: GraphQLError): void {
    this.reason = reason;
    this.waiter?.interrupt(reason);
  }
}

const expiries = new WeakMap<object, Expiry>();

/**
 * A timeout per subgraph call, retries included. Hand-written instead of the runtime's useUpstreamTimeout, which gives
 * each call an AbortSignal.timeout that lives, timer included, for the whole timeout after the call has ended; the
 * HTTP executor hangs a listener on its transport-wide dispose signal for every call, removed only once the call's
 * signal aborts. At a few hundred calls a second that list held thousands of listeners, each call's addEventListener
 * walked it (about 70 µs per request in a CPU profile) and their closures weighed on the heap. Here the timer is
 * cleared as soon as the call ends. A query past its timeout is cancelled at its subgraph (useQueryCancellation); a
 * mutation is not, as when its client leaves: the write completes, and the client has its GATEWAY_TIMEOUT.
 */
function withTimeout(executor: Executor, subgraphName: string, timeoutMs: number): Executor {
  return (request) => {
    const expiry = new Expiry();
    expiries.set(request, expiry);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        const error = timedOut(subgraphName, timeoutMs);
        reject(error);
        expiry.expire(error);
      }, timeoutMs);
      const settle = () => {
        clearTimeout(timer);
        expiries.delete(request);
      };
      try {
        Promise.resolve(executor(request)).then(
          (result) => (settle(), resolve(result)),
          (error: unknown) => (settle(), reject(error)),
        );
      } catch (error) {
        settle();
        reject(error);
      }
    });
  };
}

/**
 * The headers a subgraph call carries for its caller (gateway.ts propagates them): the caller's own bearer token, which
 * the subgraphs verify themselves. Calls with different ones are never shared or merged.
 */
export function callerHeaders(request: Request | undefined): Record<string, string> {
  const authorization = request?.headers.get('authorization');
  return authorization ? { authorization } : {};
}

/** Headers that differ between identical calls (set per request at fetch time) and so do not tell calls apart. */
const PER_REQUEST_HEADERS = new Set(['x-request-id', 'traceparent', 'tracestate', 'baggage']);

/**
 * What makes two calls the same one: URL, method, body and headers (Authorization among them). Calls are found by
 * URL, method and the body's length, and told apart by comparing body and headers: as part of a Map key V8 would hash
 * them whole, about 2 ns a character (18 µs for an 8 KB body), where comparing them with the few calls of the same key
 * is a memcmp.
 */
interface CallIdentity {
  key: string;
  body: string;
  headers: string;
}

/** A call's identity, or undefined if unsure. */
function callIdentity(url: string, init: RequestInit): CallIdentity | undefined {
  const { body, headers: given } = init;
  if (typeof body !== 'string') return undefined;
  let headers = '';
  const add = (value: string, name: string) => {
    if (!PER_REQUEST_HEADERS.has(name.toLowerCase())) headers += `${name}:${value}\n`;
  };
  if (given instanceof Headers) given.forEach(add);
  else if (Array.isArray(given)) for (const [name, value] of given) add(value!, name!);
  else for (const name in given) add((given as Record<string, string>)[name]!, name);
  return { key: `${url}|${init.method ?? 'POST'}|${body.length}`, body, headers };
}

type Interruption = AbortSignal | Expiry;

/**
 * The waiters on each signal, behind one listener per signal. Node's addEventListener walks a signal's listeners to
 * refuse duplicates, and the HTTP transport's dispose signal is the same for every call in flight: a listener per call
 * made each call pay for all the others (13 µs per request in a profile of the benchmark's (b)).
 */
const signalWaiters = new WeakMap<AbortSignal, Set<Waiter>>();

function watch(interruption: Interruption, waiter: Waiter): void {
  if (interruption instanceof Expiry) {
    interruption.waiter = waiter;
    return;
  }
  let waiters = signalWaiters.get(interruption);
  if (!waiters) {
    const all = (waiters = new Set());
    signalWaiters.set(interruption, all);
    interruption.addEventListener('abort', () => all.forEach((one) => one.interrupt(interruption.reason)), { once: true });
  }
  waiters.add(waiter);
}

function unwatch(interruption: Interruption, waiter: Waiter): void {
  if (!(interruption instanceof Expiry)) signalWaiters.get(interruption)?.delete(waiter);
  else if (interruption.waiter === waiter) interruption.waiter = undefined;
}

/** Settles as `promise` does, or rejects with the reason of the first interruption; leaves no waiter behind. */
function unlessInterrupted<T>(promise: Promise<T>, interruptions: readonly Interruption[]): Promise<T> {
  const interrupted = interruptions.find((interruption) => interruption.aborted);
  if (interrupted) return Promise.reject(interrupted.reason);
  return new Promise<T>((resolve, reject) => {
    const release = () => interruptions.forEach((interruption) => unwatch(interruption, waiter));
    const waiter: Waiter = {
      interrupt(reason) {
        release();
        reject(reason);
      },
    };
    interruptions.forEach((interruption) => watch(interruption, waiter));
    promise.then(
      (value) => (release(), resolve(value)),
      (error: unknown) => (release(), reject(error)),
    );
  });
}

/** A shared subgraph answer's body read once, for each of its callers to get a Response of its own. */
interface BufferedAnswer {
  status: number;
  statusText: string;
  headers: Headers;
  body: string;
}

interface SharedCall extends CallIdentity {
  response: Promise<Response>;
  /** Set once a second caller needs the answer too: its body, read once. */
  buffered?: Promise<BufferedAnswer>;
  callers: number;
  /** No longer joinable: answered to its only caller, read for all, failed or cancelled. */
  closed: boolean;
  controller: AbortController;
  /** How many writes this gateway had answered when the call was sent. */
  writes: number;
}

/** The reason a shared call is aborted with once every caller has gone. */
const EVERY_CALLER_LEFT = Object.freeze(new Error('every caller of this subgraph call has gone'));

const buffer = async (response: Response): Promise<BufferedAnswer> => ({
  status: response.status,
  statusText: response.statusText,
  headers: response.headers,
  body: await response.text(),
});

/**
 * Queries whose clients have all gone (or whose deadline passed) are cancelled at their subgraphs, and identical queries in flight at the same
 * time are sent once and share the answer. Hand-written: the HTTP executor's own sharing (deduplicateInflightRequests,
 * turned off for this) sends the shared call with its first caller's signal, so that caller leaving would fail the
 * answer of every other; here a shared call is cancelled only when each of its callers has left or timed out. A call
 * that nobody joined hands its response over as it came; a shared one is read once. Mutations are never cancelled: a
 * write the client stopped waiting for still completes. A query never joins a call sent before a write this gateway
 * has since answered: the answer may predate the write, and its client may have read the write's (read-your-writes).
 */
export function useQueryCancellation(): GatewayPlugin {
  // The calls open to join, by their identity's key.
  const calls = new Map<string, SharedCall[]>();
  // Writes answered so far (counted as each mutation's execution ends, before its response is sent).
  let writes = 0;
  // Each caller of a shared call gets a Response of its own, of the runtime's fetch API (its Response over a string is
  // a few objects; Node's own builds a web stream: 24 µs per request in a CPU profile).
  let ResponseOf: typeof Response = Response;
  const close = (call: SharedCall) => {
    if (call.closed) return;
    call.closed = true;
    const open = calls.get(call.key)!;
    if (open.length === 1) calls.delete(call.key);
    else open.splice(open.indexOf(call), 1);
  };
  const join = ({ key, body, headers }: CallIdentity) => calls.get(key)?.find((open) => open.body === body && open.headers === headers && open.writes === writes);
  const start = (send: (init: RequestInit) => Promise<Response>, init: RequestInit, identity: CallIdentity): SharedCall => {
    const controller = new AbortController();
    const call: SharedCall = { ...identity, callers: 0, closed: false, controller, writes, response: send({ ...init, signal: controller.signal }) };
    call.response.catch(() => close(call)); // each caller sees the failure through its own await
    const open = calls.get(call.key);
    if (open) open.push(call);
    else calls.set(call.key, [call]);
    return call;
  };
  return {
    onYogaInit({ yoga }) {
      ResponseOf = yoga.fetchAPI.Response;
    },
    onExecute({ args }) {
      if (!hasOperation(args.document, 'mutation')) return undefined;
      return {
        onExecuteDone() {
          writes++;
        },
      };
    },
    onFetch({ options, context, executionRequest, fetchFn, setFetchFn }) {
      if (!executionRequest || !hasOperation(executionRequest.document, 'query') || typeof options.body !== 'string') return;
      // An HTTP request's signal aborts at its deadline or when its client leaves before the answer (a WebSocket
      // operation has none).
      const { req, request } = (context ?? {}) as { req?: IncomingMessage; request?: Request };
      const client = requestSignalOf(req) ?? request?.signal;
      const expiry = expiries.get(executionRequest);
      setFetchFn((async (url: string, init: RequestInit = {}, ...rest: unknown[]) => {
        const identity = callIdentity(url, init);
        if (identity === undefined) return (fetchFn as (...args: unknown[]) => Promise<Response>)(url, init, ...rest);
        const call = join(identity) ?? start((shared) => (fetchFn as (...args: unknown[]) => Promise<Response>)(url, shared, ...rest), init, identity);
        call.callers++;
        let answered = false;
        try {
          const interruptions = [init.signal, client, expiry].filter((interruption) => !!interruption);
          const response = await unlessInterrupted(call.response, interruptions);
          if (call.callers === 1 && !call.buffered) {
            close(call);
            answered = true;
            return response;
          }
          const answer = await unlessInterrupted((call.buffered ??= buffer(response)), interruptions);
          answered = true;
          return new ResponseOf(answer.body, { status: answer.status, statusText: answer.statusText, headers: answer.headers });
        } finally {
          call.callers--;
          if (answered && call.callers === 0) close(call);
          else if (!answered && call.callers === 0 && !call.closed) {
            close(call);
            call.controller.abort(EVERY_CALLER_LEFT);
          }
        }
      }) as typeof fetchFn);
    },
  };
}

type RetryOptions = Exclude<Parameters<typeof useUpstreamRetry>[0], (...args: never[]) => unknown>;
type RetryPayload = Parameters<NonNullable<RetryOptions['shouldRetry']>>[0];

/** An error a subgraph answered with, not one made of a failed call (the runtime's test, from @envelop/core). */
const answeredError = (error: unknown): boolean => error instanceof GraphQLError && (error.originalError == null || answeredError(error.originalError));

/**
 * The runtime's useUpstreamRetry asks shouldRetry after every attempt, the last one included, and when told yes it
 * waits the next backoff before it sees that no attempt is left and returns the failure: a refusal (503) was answered
 * only after a wait longer than all the retries before it (with 1 retry of 100 ms, 200 ms then 400 ms for nothing),
 * past a short timeout, as SUBGRAPH_TIMEOUT. Here the last attempt's failure is final at once; what is retried is the
 * runtime's default: a 5xx, 429 or Retry-After answer, or a failure that is not a subgraph's own GraphQL error.
 * The runtime waits what a Retry-After asks: one that ends past the call's `deadline` is answered at once, as the
 * refusal it is, not as the SUBGRAPH_TIMEOUT waiting for it would end in. A call whose request is over (its client
 * left, or its deadline passed) is not retried.
 */
const worthRetrying = (maxRetries: number, deadline: number) => ({ executionRequest, executionResult, response }: RetryPayload): boolean => {
  if (isRetryExecutionRequest(executionRequest) && getRetryInfo(executionRequest).attempt >= maxRetries) return false;
  // Its client left or its deadline passed: nobody waits for another attempt.
  if (contextSignalOf(executionRequest.context)?.aborted) return false;
  const wait = retryAfterMs(response?.headers.get('retry-after'));
  if (wait !== undefined && Date.now() + wait >= deadline) return false;
  if (response && (response.status >= 500 || response.status === 429 || wait !== undefined)) return true;
  return !executionResult || (!isAsyncIterable(executionResult) && !!executionResult.errors?.some((error) => !answeredError(error)));
};

/** The wait a Retry-After asks for in milliseconds, read as the runtime reads it (seconds, else an HTTP date). */
function retryAfterMs(value: string | null | undefined): number | undefined {
  if (!value) return undefined;
  const seconds = parseInt(value, 10);
  if (!Number.isNaN(seconds)) return seconds * 1000;
  const date = new Date(value).getTime();
  return Number.isNaN(date) ? undefined : date - Date.now();
}

const failedInTransport = (result: unknown) =>
  (result as ExecutionResult | undefined)?.errors?.some((error) => TRANSPORT_FAILURES.has(error.extensions?.['code'])) ?? false;

export interface Upstreams {
  /** Retries, timeout and breaker, innermost first (their order in the plugin list is the order they wrap). */
  plugins: GatewayPlugin[];
  /** Each subgraph called so far and its circuit's state. */
  states(): Record<string, CircuitState>;
}

// The retries are the runtime's own plugin; the order is ours (the timeout wraps the retries, so a call never costs
// more than it).
export function upstreams(settings: UpstreamSettings, logger: Logger): Upstreams {
  const timeoutOf = (subgraph: string) => settings.timeoutBySubgraph[subgraph] ?? settings.timeoutMs;
  const breakers = new Map<string, Breaker>();
  const breakerOf = (subgraph: string) => {
    let breaker = breakers.get(subgraph);
    if (!breaker) breakers.set(subgraph, (breaker = new Breaker(settings)));
    return breaker;
  };
  const record = (subgraph: string, ok: boolean | undefined) => {
    const changed = breakerOf(subgraph).record(ok);
    if (changed) logger[changed === 'open' ? 'warn' : 'info']({ subgraph, circuit: changed }, 'subgraph circuit changed');
  };
  /**
   * A subgraph that answers 5xx did not run the operation, whatever its body says. GraphQL over HTTP lets a server
   * refuse with a GraphQL response, which the HTTP executor passed on as the subgraph's own errors: masked as
   * INTERNAL_SERVER_ERROR, and an answer to the breaker. The body is dropped, so the executor reports the failed call it
   * is (SUBGRAPH_UNAVAILABLE, a failure to the breaker); status and headers stay for the retries (Retry-After). The
   * replacement is of the answer's own class, the transport's fetch API.
   */
  const useServerErrorsAsFailures: GatewayPlugin = {
    onFetch: ({ executionRequest }) =>
      executionRequest &&
      (({ response, setResponse }) => {
        if (response.status < 500 || response.body === null) return;
        response.body.cancel().catch(() => undefined);
        const Answer = response.constructor as typeof Response;
        setResponse(new Answer(null, { status: response.status, statusText: response.statusText, headers: response.headers }));
      }),
  };
  // Failures are returned as a result with errors, as the HTTP transport reports its own, so that the planner places
  // them on the fields this subgraph owns (a thrown error would lose its path).
  const withBreaker = (executor: Executor, subgraphName: string): Executor => async (request) => {
    if (!breakerOf(subgraphName).admit()) return { errors: [circuitOpen(subgraphName)] };
    // A call its client abandoned (its connection closed: useQueryCancellation cancels it) says nothing about the
    // subgraph, however it ended.
    const abandoned = () => !!request.signal?.aborted || !!(request.context as { request?: Request } | undefined)?.request?.signal?.aborted;
    try {
      const result = await executor(request);
      // A subscription's stream is judged by whether it could start.
      record(subgraphName, abandoned() ? undefined : Symbol.asyncIterator in Object(result) || !failedInTransport(result));
      return result;
    } catch (error) {
      const timedOut = error instanceof GraphQLError && isTimeout(error);
      record(subgraphName, timedOut || !abandoned() ? false : undefined);
      if (error instanceof GraphQLError && TRANSPORT_FAILURES.has(error.extensions['code'])) return { errors: [error] };
      throw error;
    }
  };
  /**
   * The breaker outside the timeout, the timeout around the retries, in one hook: each hook costs the runtime a payload
   * object per subgraph call. A subscription lives as long as its client wants it: no timeout (its start is bounded by
   * the transport's).
   */
  const useCallPolicy: GatewayPlugin = {
    onSubgraphExecute({ subgraphName, executionRequest, executor, setExecutor }) {
      const timeoutMs = hasOperation(executionRequest.document, 'subscription') ? undefined : timeoutOf(subgraphName);
      setExecutor(withBreaker(timeoutMs ? withTimeout(executor, subgraphName, timeoutMs) : executor, subgraphName));
    },
  };
  return {
    plugins: [
      // The runtime multiplies the delay by the factor before the first retry too: half of it is given, so that the
      // first retry waits UPSTREAM_RETRY_DELAY_MS, the next twice that.
      useUpstreamRetry(({ subgraphName, executionRequest }) =>
        hasOperation(executionRequest.document, 'query')
          ? {
              maxRetries: settings.retries,
              retryDelay: settings.retryDelayMs / 2,
              retryDelayFactor: 2,
              shouldRetry: worthRetrying(settings.retries, Date.now() + timeoutOf(subgraphName)),
            }
          : undefined,
      ),
      useCallPolicy,
      useServerErrorsAsFailures,
    ],
    states: () => Object.fromEntries([...breakers].map(([name, breaker]) => [name, breaker.state])),
  };
}

/**
 * Signs every subgraph call, over HTTP and WebSocket alike, with the signature the runtime's `hmacSignature` option
 * writes (core's signOperation, over the query as the transports print it), made at once with node:crypto: the
 * runtime's plugin signs with WebCrypto, a thread-pool job of about 65 µs of CPU per call, a tenth of the gateway's
 * CPU per request in the benchmark's scenario (a).
 */
export function useSubgraphSignature(secret: string): GatewayPlugin {
  const sign = requestSigner(secret);
  return {
    onSubgraphExecute({ executionRequest }) {
      sign(executionRequest);
    },
  };
}

/**
 * Signs a subgraph request in place (its extensions replaced): the plugin above for every call, and the entity cache
 * (caching/entity-cache.ts) for a fetch it narrows to the representations it does not hold.
 */
export function requestSigner(secret: string): (executionRequest: ExecutionRequest) => ExecutionRequest {
  // Each subgraph query's signed text, by its document: the planner keeps one document per fetch of a plan.
  const signedQueries = new WeakMap<DocumentNode, string>();
  return (executionRequest) => {
    const { document } = executionRequest;
    let queryJson = signedQueries.get(document);
    if (queryJson === undefined) signedQueries.set(document, (queryJson = signedQueryJson(defaultPrintFn(document))));
    const signature = signOperation(secret, { queryJson, variables: executionRequest.variables });
    executionRequest.extensions = { ...executionRequest.extensions, [SIGNATURE_EXTENSION]: signature };
    return executionRequest;
  };
}

/**
 * /readyz says how each subgraph's circuit stands. An open circuit does not make the gateway unready: every replica
 * sees the same subgraph, so going unready would take them all out of the load balancer and turn partial answers into
 * no answers at all.
 */
export function useReadinessReport(endpoint: string, states: () => Record<string, CircuitState>): GatewayPlugin {
  return {
    onResponse({ request, response, setResponse }) {
      if (!response.ok || new URL(request.url).pathname !== endpoint) return;
      setResponse(Response.json({ status: 'ready', subgraphs: states() }, { headers: { 'cache-control': 'no-store' } }));
    },
  };
}
