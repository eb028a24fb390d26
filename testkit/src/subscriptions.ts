// Real subscription clients for tests (graphql-ws, subscriptions-transport-ws, graphql-sse), the stream of what one
// subscription receives, and polls for things that become true asynchronously.
import { SubscriptionClient } from '@httptoolkit/subscriptions-transport-ws';
import { Repeater } from '@repeaterjs/repeater';
import { createClient as createSseClient, type Client as SseClient } from 'graphql-sse';
import { createClient as createWsClient, type Client as WsClient } from 'graphql-ws';
import { Redis } from 'ioredis';
import WebSocket from 'ws';

export const toWsUrl = (url: string) => url.replace(/^http/, 'ws');

export interface WsClientOptions {
  token?: string;
  /** Where the token goes: the connection_init payload (default) or the handshake's Authorization header. */
  via?: 'payload' | 'header';
  /** More headers for the handshake (an x-request-id, say). */
  headers?: Record<string, string>;
  /** More of the connection_init payload (a client name, say), beside the token's Authorization. */
  connectionParams?: Record<string, unknown>;
  /** Called with the socket once it is open (to cut it abruptly, say). */
  onOpened?: (socket: WebSocket) => void;
  /** Called with the close event when the connection closes. */
  onClosed?: (event: { code: number; reason: string }) => void;
}

/** A graphql-ws client (subprotocol graphql-transport-ws) that never retries, so a refusal shows as it is. */
export function wsClient(url: string, options: WsClientOptions = {}): WsClient {
  const authorization = options.token ? `Bearer ${options.token}` : undefined;
  const headers =
    (options.via === 'header' && authorization) || options.headers
      ? { ...options.headers, ...(options.via === 'header' && authorization ? { authorization } : {}) }
      : undefined;
  return createWsClient({
    url: toWsUrl(url),
    webSocketImpl: headers
      ? class extends WebSocket {
          constructor(address: string, protocols: string | string[]) {
            super(address, protocols, { headers });
          }
        }
      : WebSocket,
    ...(options.connectionParams || (options.via !== 'header' && authorization)
      ? { connectionParams: { ...options.connectionParams, ...(options.via !== 'header' && authorization ? { Authorization: authorization } : {}) } }
      : {}),
    retryAttempts: 0,
    on: {
      opened: (socket) => options.onOpened?.(socket as WebSocket),
      closed: (event) => options.onClosed?.(event as { code: number; reason: string }),
    },
  });
}

export interface LegacyWsClient {
  iterate(request: SubscribeRequest): AsyncIterableIterator<unknown>;
  dispose(): void;
}

/**
 * A client of the legacy `graphql-ws` subprotocol (start/data/stop), the one Apollo's deprecated WebSocketLink speaks:
 * subscriptions-transport-ws (its maintained fork), never reconnecting, with graphql-ws's `iterate`. That client
 * cannot send a persisted-query hash alone: it refuses an operation without query text.
 */
export function legacyWsClient(url: string, options: WsClientOptions = {}): LegacyWsClient {
  const authorization = options.token ? `Bearer ${options.token}` : undefined;
  const headers = options.via === 'header' && authorization ? { authorization } : undefined;
  const client = new SubscriptionClient(
    toWsUrl(url),
    {
      reconnect: false,
      lazy: true,
      ...(options.via !== 'header' && authorization ? { connectionParams: { Authorization: authorization } } : {}),
      ...(headers ? { wsOptionArguments: [{ headers }] } : {}),
    },
    class extends WebSocket {
      constructor(address: string, protocols: string | string[], socketOptions?: WebSocket.ClientOptions) {
        super(address, protocols, socketOptions);
        this.once('open', () => options.onOpened?.(this));
        this.once('close', (code, reason) => options.onClosed?.({ code, reason: String(reason) }));
      }
    },
  );
  return {
    iterate: (request) =>
      new Repeater(async (push, stop) => {
        const subscription = client.request(request).subscribe({
          next: (result) => void push(result),
          // The client hands over the first error of an `error` message.
          error: (error) => stop(Array.isArray(error) ? error : [error]),
          complete: () => stop(),
        });
        const disconnected = client.onDisconnected(() => stop(new Error('disconnected')));
        await stop;
        disconnected();
        subscription.unsubscribe();
      }),
    dispose: () => client.close(),
  };
}

/** A graphql-sse client in distinct connections mode: one HTTP request (event stream) per subscription. */
export function sseClient(url: string, options: { token?: string } = {}): SseClient {
  return createSseClient({
    url,
    headers: options.token ? { authorization: `Bearer ${options.token}` } : {},
    retryAttempts: 0,
  });
}

export interface Stream<T> {
  /** Every result so far, in arrival order. */
  readonly results: T[];
  /** Settles when the stream ends: with undefined when it completed, with the error when it failed. */
  readonly ended: Promise<unknown>;
  /** Waits until at least `count` results have arrived, and returns them all. */
  received(count: number): Promise<T[]>;
  /** Leaves the subscription, as a client that completes it. */
  close(): Promise<void>;
}

type Extended = { extensions?: Record<string, unknown> };

/** An error entry without the request ID that the gateway adds over HTTP (SSE), checked to be one, as http.ts does. */
function withoutRequestId<E extends Extended>(error: E): E {
  if (!error?.extensions || !('requestId' in error.extensions)) return error;
  const { requestId, ...extensions } = error.extensions;
  if (typeof requestId !== 'string' || requestId === '') throw new Error(`malformed requestId in ${JSON.stringify(error)}`);
  return { ...error, extensions };
}

const normalised = <T>(value: T): T => {
  if (Array.isArray(value)) return value.map((entry) => withoutRequestId(entry as Extended)) as T;
  const errors = (value as { errors?: Extended[] } | undefined)?.errors;
  return Array.isArray(errors) ? ({ ...value, errors: errors.map(withoutRequestId) } as T) : value;
};

/** Starts reading `iterator` (subscribing now) and keeps what it yields. */
export function stream<T>(iterator: AsyncIterableIterator<T>): Stream<T> {
  const results: T[] = [];
  let finished = false;
  const ended = (async () => {
    try {
      for await (const result of iterator) results.push(normalised(result));
      return undefined;
    } catch (error) {
      return normalised(error) ?? new Error('stream failed');
    } finally {
      finished = true;
    }
  })();
  return {
    results,
    ended,
    async received(count) {
      await waitFor(() => results.length >= count || finished, `${count} results`);
      if (results.length < count) throw new Error(`stream ended after ${results.length} of ${count} results: ${String(await ended)}`);
      return results;
    },
    async close() {
      await iterator.return?.();
      await ended;
    },
  };
}

/** One result of a subscription, as either client hands it over. */
export interface SubscriptionResult {
  data?: Record<string, any> | null;
  errors?: readonly { message: string; extensions?: Record<string, any> }[];
}

export interface SubscribeRequest {
  query: string;
  variables?: Record<string, unknown>;
  operationName?: string;
  extensions?: Record<string, unknown>;
}

interface SubscribingClient {
  iterate(request: SubscribeRequest): AsyncIterableIterator<unknown>;
}

/** Subscribes `client` (graphql-ws, the legacy client or graphql-sse) to `query` now. */
export function subscribe(
  client: SubscribingClient,
  query: string,
  variables?: Record<string, unknown>,
  options: Omit<SubscribeRequest, 'query' | 'variables'> = {},
): Stream<SubscriptionResult> {
  return stream(client.iterate({ query, ...(variables ? { variables } : {}), ...options }) as AsyncIterableIterator<SubscriptionResult>);
}

/**
 * Polls `check` until it holds. The deadline only bounds a hang (it is not a timing assertion): a test that needs
 * it has failed anyway.
 */
export async function waitFor(check: () => boolean | Promise<boolean>, what: string, deadlineMs = 20_000): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Redis PUBSUB NUMSUB summed over the channels matching `pattern`: how many connections subscribe them. */
export async function redisSubscriptions(url: string, pattern = '*'): Promise<number> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0 });
  try {
    await redis.connect();
    const channels = (await redis.pubsub('CHANNELS', pattern)) as string[];
    if (channels.length === 0) return 0;
    const counts = (await redis.pubsub('NUMSUB', ...channels)) as (string | number)[];
    return counts.filter((_, i) => i % 2 === 1).reduce<number>((sum, count) => sum + Number(count), 0);
  } finally {
    redis.disconnect();
  }
}

/** A subscription that only counts its results (keeping none, so a memory test measures the server, not the client). */
export interface CountingSubscription {
  readonly delivered: number;
  readonly errors: unknown[];
  /** Waits until `count` results have arrived. */
  reach(count: number): Promise<void>;
  close(): void;
}

/** What graphql-ws's and graphql-sse's clients have in common: subscribe with a sink, and a function that leaves. */
interface SinkClient {
  subscribe(request: SubscribeRequest, sink: { next(value: unknown): void; error(error: unknown): void; complete(): void }): () => void;
}

export function countResults(client: SinkClient, request: SubscribeRequest): CountingSubscription {
  const errors: unknown[] = [];
  let delivered = 0;
  const close = client.subscribe(request, {
    next: (result) => {
      delivered++;
      if ((result as SubscriptionResult).errors) errors.push((result as SubscriptionResult).errors);
    },
    error: (error) => void errors.push(error),
    complete: () => {},
  });
  return {
    get delivered() {
      return delivered;
    },
    errors,
    // A minute, not waitFor's 20 s: a batch of events crosses Redis, orders and the gateway, and on a machine shared by
    // several test suites one batch has taken longer than 20 s (a lost event still fails, only later).
    reach: (count) => waitFor(() => delivered >= count || errors.length > 0, `${count} results`, 60_000),
    close,
  };
}

/** A Redis client of the test kit's own ioredis, to publish events with the helpers below. */
export const redisClient = (url: string): Redis => new Redis(url);

/** A new-order event as the orders subgraph publishes it, with `lineItems` items (large events fill buffers fast). */
export function orderEvent(id: string, userId: string, lineItems = 0): string {
  const now = new Date().toISOString();
  const items = Array.from({ length: lineItems }, (_, i) => ({ productId: `product-${i}`, quantity: 1, unitPriceCents: 100 }));
  return JSON.stringify({ _id: id, userId, status: 'PENDING', items, totalCents: 100 * lineItems, version: 1, createdAt: now, updatedAt: now });
}

/** Waits until some connection subscribes Redis `channel` (PUBSUB NUMSUB). */
export async function channelSubscribed(publisher: Redis, channel: string): Promise<void> {
  const listening = async () => Number(((await publisher.pubsub('NUMSUB', channel)) as [string, number])[1]) > 0;
  await waitFor(listening, `a subscriber of ${channel}`);
}

/**
 * Publishes `count` new-order events of `userId` to the orders subgraph's creation `channel` straight through Redis,
 * as another replica's commits would (without writing orders, which would grow the store), and waits until
 * `subscription` has received them all. Each batch is delivered before the next is published, so a subscriber's
 * buffer never overflows.
 */
export async function publishOrderEvents(
  publisher: Redis,
  channel: string,
  userId: string,
  count: number,
  subscription: CountingSubscription,
  { batch = 50, lineItems = 0 } = {},
): Promise<void> {
  const start = subscription.delivered;
  await channelSubscribed(publisher, channel);
  for (let sent = 0; sent < count; sent += batch) {
    const size = Math.min(batch, count - sent);
    const pipeline = publisher.pipeline();
    for (let i = 0; i < size; i++) pipeline.publish(channel, orderEvent(`event-${sent + i}`, userId, lineItems));
    await pipeline.exec();
    await subscription.reach(start + sent + size);
  }
}
