// What the gateway and the subgraphs share about subscription streams: the graphql_active_subscriptions gauge, the
// wrapper that keeps it true however a stream ends, and how a WebSocket connection authenticates.
import type { IncomingMessage } from 'node:http';
import { Repeater } from '@repeaterjs/repeater';
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

/** setTimeout's longest delay; a deadline further away than this (about 24 days) is not watched. */
const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;
const ENDED = Symbol('ended');
const STOPPED = Symbol('stopped');
type Interruption = typeof ENDED | typeof STOPPED;

/**
 * Races each wait of a stream with the stream's end, listening to the end once per stream. Promise.race([next, stop])
 * per event would add a reaction to `stop` per event, each holding that event's result until the stream ends.
 */
function interruptible() {
  let reason: Interruption | undefined;
  let wake: ((reason: Interruption) => void) | undefined;
  return {
    interrupt(why: Interruption) {
      reason ??= why;
      wake?.(reason);
    },
    wait<V>(next: Promise<V>): Promise<V | Interruption> {
      if (reason !== undefined) return Promise.resolve(reason);
      return new Promise<V | Interruption>((resolve, reject) => {
        wake = resolve;
        next.then(resolve, reject);
      });
    },
  };
}

/**
 * `source`, counted in `gauge` from its first read until it ends: completed, failed, or returned by its consumer (a
 * client that left), and `source` is returned in every case. A Repeater, not an async generator: a generator that
 * waits for the source's next event cannot be returned before that event arrives, so a quiet stream would leak.
 */
export function trackSubscription<T>(source: AsyncIterable<T>, metrics: SubscriptionMetrics, options: TrackOptions<T> = {}): AsyncIterableIterator<T> {
  return new Repeater<T>(async (push, stop) => {
    metrics.active.inc();
    metrics.started.inc();
    let reason = 'client';
    const iterator = source[Symbol.asyncIterator]();
    // A source that fails while being returned has nothing left to release; there is no one to tell.
    const release = stop.then(() => iterator.return?.()).catch(() => undefined);
    const ending = interruptible();
    void stop.then(() => ending.interrupt(STOPPED));
    let last: { value: T; reason: string } | undefined;
    const end = (value: T, why: string) => {
      last ??= { value, reason: why };
      ending.interrupt(ENDED);
    };
    const { deadline } = options;
    const delay = deadline ? Math.max(0, deadline.at - Date.now()) : Infinity;
    const timer = deadline && delay <= MAX_TIMER_DELAY_MS ? setTimeout(() => end(deadline.last, 'expired'), delay) : undefined;
    options.onStart?.(end);
    let pending = 0; // events pushed that the consumer has not taken yet
    try {
      for (;;) {
        const next = iterator.next();
        next.catch(() => undefined); // once stopped, nobody awaits it
        const result = await ending.wait(next).catch((error: unknown) => {
          reason = 'error';
          throw options.mapError ? options.mapError(error) : error;
        });
        if (result === ENDED) {
          reason = last!.reason;
          await push(last!.value);
          return;
        }
        if (result === STOPPED) return;
        if (result.done) {
          reason = 'complete';
          return;
        }
        if (!options.overflow) {
          await push(result.value);
        } else if (pending < options.overflow.maxPending) {
          pending++;
          void push(result.value).then(() => pending--);
        } else {
          reason = 'error';
          options.overflow.onOverflow();
          throw options.overflow.error;
        }
      }
    } finally {
      clearTimeout(timer);
      metrics.active.dec();
      metrics.ended.inc({ reason });
      options.onEnd?.();
      stop();
      await release;
    }
  });
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
