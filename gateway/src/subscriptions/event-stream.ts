// Subscriptions over SSE (graphql-sse's distinct connections mode), as yoga's own event stream writes them, at a
// fraction of its cost per event: one chunk per event, written from a Node stream that the server pipes to the
// connection, and each event serialised once however many subscribers of a shared stream receive it.
import { Readable } from 'node:stream';
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';
import type { ExecutionResult } from 'graphql';
import { isAsyncIterable } from '@graphql-tools/utils';
import { resultJson } from './result-json.js';
import { isSubscriptionRequest } from '../shared/subscription-requests.js';

const eventChunks = new WeakMap<object, Buffer>();
/** An event's whole SSE message, encoded once per result object (a Buffer may be written to many sockets). */
function eventChunk(result: ExecutionResult): Buffer {
  let chunk = eventChunks.get(result);
  if (chunk === undefined) eventChunks.set(result, (chunk = Buffer.from(`event: next\ndata: ${resultJson(result)}\n\n`)));
  return chunk;
}

const PING = Buffer.from(':\n\n');
const COMPLETE = Buffer.from('event: complete\ndata:\n\n');

/**
 * The events of one subscription as a Node stream: the server pipes it to the connection, so an event is read from
 * the subscription only when the connection has taken the previous ones (a subscriber that stops reading leaves its
 * events unread, and subscriptions/tracking.ts disconnects it). Destroyed when the connection closes, which ends the
 * subscription.
 */
class EventStream extends Readable {
  private reading = false;
  private readonly ping: ReturnType<typeof setInterval>;

  constructor(private readonly events: AsyncIterator<ExecutionResult>, pingMs: number) {
    super();
    // A first comment at once: some clients wait for a first byte before they report the stream open.
    this.push(PING);
    this.ping = setInterval(() => {
      if (this.readableLength === 0) this.push(PING);
    }, pingMs);
  }

  override _read() {
    if (this.reading) return;
    this.reading = true;
    let next: Promise<IteratorResult<ExecutionResult>>;
    try {
      next = this.events.next();
    } catch (error) {
      this.onFailure(error);
      return;
    }
    next.then(this.onEvent, this.onFailure);
  }

  private readonly onEvent = (event: IteratorResult<ExecutionResult>) => {
    this.reading = false;
    if (this.destroyed) return;
    if (event.done) {
      clearInterval(this.ping);
      this.push(COMPLETE);
      this.push(null);
      return;
    }
    if (event.value != null) this.push(eventChunk(event.value));
    else this._read(); // nothing to write: read on
  };

  private readonly onFailure = (error: unknown) => {
    this.reading = false;
    this.destroy(error instanceof Error ? error : new Error(String(error)));
  };

  override _destroy(error: Error | null, callback: (error?: Error | null) => void) {
    clearInterval(this.ping);
    // The subscription ends with the connection; a source that fails while being returned has no one left to tell.
    Promise.resolve(this.events.return?.())
      .catch(() => undefined)
      .then(() => callback(error));
  }
}

const HEADERS = { 'content-type': 'text/event-stream', connection: 'keep-alive', 'cache-control': 'no-cache', 'content-encoding': 'none' };

/**
 * Takes over yoga's event stream for subscriptions: yoga has picked it when a subscription's stream has a processor
 * at this point (it has no other for a stream; multipart.ts sets its own after this plugin). The messages, pings and
 * end are the same as yoga's.
 */
export function useEventStreams(): GatewayPlugin {
  // As yoga's: a comment every 12 s keeps idle proxies from closing the stream (every 300 ms under NODE_ENV=test).
  const pingMs = process.env['NODE_ENV'] === 'test' ? 300 : 12_000;
  return {
    onResultProcess({ request, result, resultProcessor, setResultProcessor }) {
      if (!resultProcessor || !isAsyncIterable(result) || !isSubscriptionRequest(request)) return;
      setResultProcessor((events, fetchAPI) => {
        const body = new EventStream((events as AsyncIterable<ExecutionResult>)[Symbol.asyncIterator](), pingMs);
        return new fetchAPI.Response(body as unknown as BodyInit, { status: 200, headers: HEADERS });
      }, 'text/event-stream');
    },
  };
}
