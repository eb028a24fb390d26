// What the gateway and the subgraphs share about subscription streams: the graphql_active_subscriptions gauge, the
// wrapper that keeps it true however a stream ends, and how a WebSocket connection authenticates.
import type { IncomingMessage } from 'node:http';
import { Counter, Gauge, type Registry } from 'prom-client';
import { InvalidTokenError, viewerFromHeader, type RequestIdentity, type TokenVerifier } from './auth.js';

export interface SubscriptionMetrics {
  active: Gauge;
  started: Counter;
  ended: Counter<'reason'>;
}

export function subscriptionMetrics(registry: Registry): SubscriptionMetrics {
  return {
    active: new Gauge({
      name: 'graphql_active_subscriptions',
      help: 'Subscription streams open in this process (WebSocket and SSE); falls back to its baseline as clients leave',
      registers: [registry],
    }),
    started: new Counter({ name: 'graphql_subscriptions_started_total', help: 'Subscription streams started', registers: [registry] }),
    ended: new Counter({
      name: 'graphql_subscriptions_ended_total',
      help: 'Subscription streams ended, by reason: complete (the source ended), client (the client left), error, expired (its token did), reload (the supergraph changed)',
      labelNames: ['reason'],
      registers: [registry],
    }),
  };
}

export interface TrackOptions<T> {
  /** Runs once the stream has ended, however it ended. */
  onEnd?: () => void;
  /** What the consumer sees instead of the error the source failed with. */
  mapError?: (error: unknown) => unknown;
  /** Ends the stream at `at` (ms since the epoch), `last` being its final value: when the caller's token expires. */
  deadline?: { at: number; last: T };
  /**
   * Called as the stream starts with a function that ends it at once, `last` being its final value and `reason` what
   * graphql_subscriptions_ended_total counts it under (a supergraph reload, say).
   */
  onStart?: (end: (last: T, reason: string) => void) => void;
  /**
   * A consumer that has not taken this many events while more arrive is too slow: the stream fails with
   * `overflow.error` (and `overflow.onOverflow` cuts its transport) instead of holding events for it without bound.
   * Without it, the stream reads the source only as fast as the consumer takes events.
   */
  overflow?: { maxPending: number; error: unknown; onOverflow(): void };
}

/**
 * A source that can hand its events to its one reader as they arrive, sparing trackSubscription a promise per event:
 * subscriptions/sharing.ts's per-subscriber streams, read once per subscriber and event. Such a source is an
 * AsyncIterable all the same, for any other reader; returning its iterator detaches the reader.
 */
export const PUSHES_EVENTS = Symbol('ordergraph.pushesEvents');

export interface EventReader<T> {
  push(value: T): void;
  /** The source ended: with `error` when it failed. */
  end(error?: unknown): void;
}

export interface PushingSource<T> extends AsyncIterable<T> {
  [PUSHES_EVENTS](reader: EventReader<T>): void;
}

/** setTimeout's longest delay; a deadline further away than this (about 24 days) is not watched. */
const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

type Settle<T> = { resolve(result: IteratorResult<T>): void; reject(error: unknown): void };

/**
 * The stream trackSubscription returns. It reads its source with callbacks, not `await` in a loop raced against its
 * end (Promise.race([next, stop]) per event would keep every event's result until the stream ends), or takes the
 * events a source pushes: per event it allocates the consumer's promise and the source's, if read, and nothing else.
 * A gateway runs one of these per subscriber, so this is paid once per delivered event.
 */
class TrackedStream<T> implements AsyncIterableIterator<T> {
  private iterator: AsyncIterator<T> | undefined;
  private started = false;
  /** Set once: no value joins the queue after it; `failure` is thrown to the consumer once the queue is empty. */
  private finished = false;
  private failure: { error: unknown } | undefined;
  /** Values read and not yet taken, oldest first. */
  private readonly queue: T[] = [];
  private waiting: Settle<T> | undefined;
  /** A read of the source is under way. */
  private reading = false;
  /** The source pushes its events (PUSHES_EVENTS): it is never read. */
  private pushed = false;
  /** Events handed out or queued that the consumer has not asked past yet (overflow's measure). */
  private pending = 0;
  private handedOut = false;
  private reason = 'client';
  private timer: ReturnType<typeof setTimeout> | undefined;
  private released: Promise<void> = Promise.resolve();

  constructor(
    private readonly source: AsyncIterable<T>,
    private readonly metrics: SubscriptionMetrics,
    private readonly options: TrackOptions<T>,
  ) {}

  [Symbol.asyncIterator]() {
    return this;
  }

  next(): Promise<IteratorResult<T>> {
    if (!this.started) this.start();
    // Asking for the next event is what says the transport has written the previous one.
    if (this.handedOut) {
      this.handedOut = false;
      this.pending--;
    }
    if (this.queue.length > 0) {
      this.handedOut = true;
      const value = this.queue.shift()!;
      this.readOnDemand();
      return Promise.resolve({ value, done: false });
    }
    if (this.finished) return this.settled();
    const waiting = new Promise<IteratorResult<T>>((resolve, reject) => (this.waiting = { resolve, reject }));
    this.readOnDemand();
    return waiting;
  }

  /** The consumer leaves (a client that went away): the source is released, and so is everything queued. */
  async return(value?: unknown): Promise<IteratorResult<T>> {
    if (!this.started) {
      // Never read: nothing was counted, but the source may hold a subscription all the same.
      this.started = this.finished = true;
      this.released = this.release(this.source[Symbol.asyncIterator]());
    } else {
      this.finish();
    }
    this.queue.length = 0;
    this.failure = undefined;
    await this.released;
    this.settleWaiting();
    return { value: value as T, done: true };
  }

  async throw(error?: unknown): Promise<IteratorResult<T>> {
    await this.return();
    throw error;
  }

  private start() {
    this.started = true;
    this.metrics.active.inc();
    this.metrics.started.inc();
    this.iterator = this.source[Symbol.asyncIterator]();
    const { deadline } = this.options;
    const delay = deadline ? Math.max(0, deadline.at - Date.now()) : Infinity;
    if (deadline && delay <= MAX_TIMER_DELAY_MS) this.timer = setTimeout(() => this.end(deadline.last, 'expired'), delay);
    this.options.onStart?.((last, reason) => this.end(last, reason));
    // A bounded stream takes events as they come: from a source that pushes them, without reading.
    const pushing = this.options.overflow ? (this.source as Partial<PushingSource<T>>)[PUSHES_EVENTS] : undefined;
    if (pushing) {
      this.pushed = true;
      pushing.call(this.source, {
        push: (value) => this.guarded(() => this.take(value)),
        end: (error) => (error === undefined ? this.guarded(() => this.complete()) : this.onError(error)),
      });
    } else {
      this.read();
    }
  }

  /** An option's callback that fails fails the stream, as a failure of its source would. */
  private guarded(step: () => void) {
    try {
      step();
    } catch (error) {
      this.onError(error);
    }
  }

  /** Without an overflow bound, the source is read only as fast as the consumer takes events. */
  private readOnDemand() {
    if (!this.pushed && !this.options.overflow && !this.reading && !this.finished && this.queue.length === 0) this.read();
  }

  private read() {
    if (this.finished) return;
    this.reading = true;
    let next: Promise<IteratorResult<T>>;
    try {
      next = this.iterator!.next();
    } catch (error) {
      this.onError(error);
      return;
    }
    next.then(this.onResult, this.onError);
  }

  private readonly onResult = (result: IteratorResult<T>) => {
    this.reading = false;
    this.guarded(() => (result.done ? this.complete() : this.take(result.value)));
  };

  /** The source completed. */
  private complete() {
    if (this.finished) return;
    this.reason = 'complete';
    this.finish();
    this.settleWaiting();
  }

  private take(value: T) {
    if (this.finished) return; // ended meanwhile (deadline, reload, the consumer left): this event is not delivered
    const { overflow } = this.options;
    if (overflow && this.pending >= overflow.maxPending) {
      this.reason = 'error';
      overflow.onOverflow();
      this.finish({ error: overflow.error });
      this.settleWaiting();
      return;
    }
    this.deliver(value);
    if (overflow && !this.pushed) this.read();
  }

  private readonly onError = (error: unknown) => {
    this.reading = false;
    if (this.finished) return;
    this.reason = 'error';
    let failure = error;
    try {
      if (this.options.mapError) failure = this.options.mapError(error);
    } catch (mapping) {
      failure = mapping;
    }
    this.finish({ error: failure });
    this.settleWaiting();
  };

  private deliver(value: T) {
    this.pending++;
    const waiting = this.waiting;
    if (waiting) {
      this.waiting = undefined;
      this.handedOut = true;
      waiting.resolve({ value, done: false });
    } else {
      this.queue.push(value);
    }
  }

  /** Ends the stream now with `last` as its final value (a deadline, a supergraph reload). */
  private end(last: T, reason: string) {
    if (this.finished) return;
    this.reason = reason;
    this.deliver(last);
    this.finish();
    this.settleWaiting();
  }

  /** Counts the end once, and releases the source; what is queued is still delivered, then `failure`, if any. */
  private finish(failure?: { error: unknown }) {
    if (this.finished) return;
    this.finished = true;
    this.failure = failure;
    clearTimeout(this.timer);
    this.metrics.active.dec();
    this.metrics.ended.inc({ reason: this.reason });
    this.released = this.release(this.iterator!);
    this.options.onEnd?.();
  }

  /** A source that fails while being returned has nothing left to release; there is no one to tell. */
  private async release(iterator: AsyncIterator<T>) {
    try {
      await iterator.return?.();
    } catch {
      // nothing to do
    }
  }

  /** The consumer waiting on an empty queue of a finished stream learns how it ended. */
  private settleWaiting() {
    const waiting = this.waiting;
    if (!waiting || this.queue.length > 0 || !this.finished) return;
    this.waiting = undefined;
    this.settled().then(waiting.resolve, waiting.reject);
  }

  /** What a finished stream answers once its queue is empty: its failure once, then done, once its source is released. */
  private settled(): Promise<IteratorResult<T>> {
    const failure = this.failure;
    this.failure = undefined;
    return this.released.then(() => {
      if (failure) throw failure.error;
      return { value: undefined, done: true } as IteratorResult<T>;
    });
  }
}

/**
 * `source`, counted in `gauge` from its first read until it ends: completed, failed, or returned by its consumer (a
 * client that left), and `source` is returned in every case, at once even while the stream waits for an event (an
 * async generator could not be returned before that event arrives, so a quiet stream would leak).
 */
export function trackSubscription<T>(source: AsyncIterable<T>, metrics: SubscriptionMetrics, options: TrackOptions<T> = {}): AsyncIterableIterator<T> {
  return new TrackedStream(source, metrics, options);
}

/**
 * Where the gateway puts each subscription's caller when it subscribes upstream: its Authorization value, in the
 * subscribe message's extensions, so that one connection carries the subscriptions of many callers.
 */
export const SUBSCRIBER_EXTENSION = 'authorization';

/**
 * The Authorization value of a WebSocket connection: `Authorization` (or `authorization`) in the connection_init
 * payload, else the handshake's Authorization header.
 */
export function websocketAuthorization(
  connectionParams: Readonly<Record<string, unknown>> | undefined,
  handshakeHeader: string | undefined,
): string | undefined {
  const fromPayload = connectionParams?.['Authorization'] ?? connectionParams?.['authorization'];
  return typeof fromPayload === 'string' ? fromPayload : handshakeHeader;
}

/** What graphql-ws's connection hooks see of a connection on a `ws` server (its Context with the ws Extra). */
interface ConnectionContext {
  readonly connectionParams?: Readonly<Record<string, unknown>> | undefined;
  readonly extra: { readonly request: IncomingMessage };
}

/**
 * Authenticates a graphql-ws connection once, at connection_init: `onConnect` is the graphql-ws hook (false, which
 * closes the connection with 4403, when a presented token does not verify; no token is an anonymous connection),
 * and `identityOf` tells each operation on the connection who sent it.
 */
export function websocketAuthentication(verify: TokenVerifier) {
  const identities = new WeakMap<ConnectionContext, RequestIdentity>();
  return {
    async onConnect(ctx: ConnectionContext): Promise<boolean> {
      const authorization = websocketAuthorization(ctx.connectionParams, ctx.extra.request.headers.authorization);
      try {
        identities.set(ctx, { viewer: await viewerFromHeader(verify, authorization), authorization });
        return true;
      } catch (error) {
        if (error instanceof InvalidTokenError) return false;
        throw error;
      }
    },
    identityOf: (ctx: ConnectionContext): RequestIdentity => identities.get(ctx) ?? { viewer: null, authorization: undefined },
  };
}
