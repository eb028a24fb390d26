// HTTP semantics at /graphql (the GraphQL-over-HTTP spec) that Hive Gateway (GraphQL Yoga) does not give by itself:
// 415 for non-JSON POSTs, 413 past 1 MiB, a preflight-forcing header on GET (CSRF), an error entry with every refusal.
import { type IncomingMessage, ServerResponse } from 'node:http';
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';
import { GraphQLError } from 'graphql';
import { ErrorCode } from '@ordergraph/core';
import { JSON_CONTENT_TYPE, codeForStatus, errorBody, errorResponse } from '../security/errors.js';
import { MAX_BODY_BYTES } from '../shared/body-limit.js';
import { ClientClosedError, setRequestSignal } from '../shared/request-signals.js';

// Yoga already answers 400 to malformed JSON and to JSON-array batches unless BATCH_MAX_OPERATIONS allows them, and
// 405 with `Allow: POST` to a mutation sent by GET; errors.ts gives those their codes.
/**
 * A refused body declared up to this size is still read (and dropped) after the 413, as nginx's lingering close does:
 * closing at once would reset a client that is still writing it, which then never sees the 413. Past it, the
 * connection is closed.
 */
const LINGER_MAX_BYTES = 16 * MAX_BODY_BYTES;

/**
 * Content types a browser sends cross-site without a CORS preflight: a request with one of these (or none) and none of
 * PREFLIGHT_HEADERS is CSRF-prone. POST already needs application/json, so this decides GET requests.
 */
const SIMPLE_CONTENT_TYPES = new Set(['application/x-www-form-urlencoded', 'multipart/form-data', 'text/plain']);
/** Headers that are not CORS-safelisted: Apollo Server's CSRF-prevention headers, and Authorization. */
export const PREFLIGHT_HEADERS = ['authorization', 'apollo-require-preflight', 'x-apollo-operation-name', 'graphql-require-preflight'];

const mediaType = (request: Request) => request.headers.get('content-type')?.split(';')[0]?.trim().toLowerCase();

/** `declared`: the body's Content-Length, if it has one; a body of unknown length is never read to its end. */
const payloadTooLarge = (declared?: number) =>
  new GraphQLError(`Request bodies are limited to ${MAX_BODY_BYTES} bytes`, {
    extensions: {
      code: ErrorCode.PAYLOAD_TOO_LARGE,
      // Without `connection: close`, Node reads the rest of the body once the response is sent, and the connection
      // carries the next request.
      http: { status: 413, headers: declared !== undefined && declared <= LINGER_MAX_BYTES ? {} : { connection: 'close' } },
    },
  });

/**
 * The request with a body that fails with 413 past MAX_BODY_BYTES, for bodies sent without a Content-Length. Written
 * here because Hive's runtime builds its yoga without passing `maxRequestBodySize` (so yoga's 25 MB default applies)
 * and yoga does not export its own limiter.
 */
function limitBody(request: Request, fetchAPI: { Request: typeof Request; TransformStream: typeof TransformStream }): Request {
  if (!request.body) return request;
  let bytes = 0;
  // The native TransformStream for a native body; whatwg-node's ponyfill for its own (yoga does the same).
  const Transform = request.body instanceof ReadableStream ? globalThis.TransformStream : fetchAPI.TransformStream;
  const body = request.body.pipeThrough(
    new Transform<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        bytes += chunk.byteLength;
        if (bytes > MAX_BODY_BYTES) controller.error(payloadTooLarge());
        else controller.enqueue(chunk);
      },
    }),
  );
  return new fetchAPI.Request(request.url, { method: request.method, headers: request.headers, body, duplex: 'half' } as RequestInit);
}

/**
 * Yoga's own limiter (25 MB, the runtime does not set it lower) pipes every body through a TransformStream, even one
 * whose Content-Length already bounds it: a web stream pipeline of about 50 µs of CPU per request. It leaves alone a
 * request whose `body` is null, so a body with a Content-Length is hidden from it. Yoga's JSON parser still reads that
 * body, through `json()`, which does not go through `body`; yoga checks the Content-Length header itself before.
 */
const hideFromYogasLimiter = (request: Request) => Object.defineProperty(request, 'body', { value: null, configurable: true });

export function useHttpSemantics(graphqlEndpoint: string): GatewayPlugin {
  return {
    onRequestParse({ request, requestParser, setRequestParser, endResponse, fetchAPI }) {
      if (request.method === 'POST') {
        if (mediaType(request) !== 'application/json') {
          endResponse(
            errorResponse(415, ErrorCode.UNSUPPORTED_MEDIA_TYPE, 'POST requests must have Content-Type: application/json', {
              accept: 'application/json',
            }),
          );
          return;
        }
        const declared = request.headers.get('content-length');
        if (Number(declared ?? 0) > MAX_BODY_BYTES) throw payloadTooLarge(Number(declared));
        // A body with a Content-Length ends there (Node's HTTP parser holds it to it); only a chunked one is counted.
        if (declared === null) {
          if (requestParser) setRequestParser((limited) => requestParser(limitBody(limited, fetchAPI)));
        } else {
          hideFromYogasLimiter(request);
        }
        return;
      }
      const contentType = mediaType(request);
      const simple = contentType === undefined || SIMPLE_CONTENT_TYPES.has(contentType);
      if (request.method === 'GET' && simple && !PREFLIGHT_HEADERS.some((name) => request.headers.get(name))) {
        endResponse(
          errorResponse(
            400,
            ErrorCode.BAD_REQUEST,
            `This request has been blocked as a potential Cross-Site Request Forgery (CSRF): send a GET with one of these headers: ${PREFLIGHT_HEADERS.join(', ')}`,
          ),
        );
      }
    },
    // Yoga answers some refusals (406 for an Accept it cannot serve) with an empty body.
    onResponse({ request, response, setResponse }) {
      if (response.status < 400 || response.body !== null || new URL(request.url).pathname !== graphqlEndpoint) return;
      setResponse(errorResponse(response.status, codeForStatus(response.status), response.statusText || 'Request refused', Object.fromEntries(response.headers)));
    },
  };
}

export const DEADLINE_MESSAGE = 'The request did not complete within its deadline';

/**
 * The whole request's deadline (REQUEST_DEADLINE_MS): an answer not begun by then is a 504 GATEWAY_TIMEOUT, and the
 * request's signal (request-signals.ts) aborts, cancelling its subgraph calls; a stream already under way (SSE,
 * multipart) is left alone. In place of the runtime's `requestDeadline`, which composes a new signal for every request
 * (weak references and a FinalizationRegistry entry each: 17 µs of CPU per request in a profile of the benchmark's
 * scenario (a)) and wraps its handler in a promise; here a request costs a timer, a controller and a listener.
 */
export function requestDeadline(request: IncomingMessage, response: ServerResponse, deadlineMs: number): void {
  const controller = new AbortController();
  setRequestSignal(request, controller.signal);
  const timer = setTimeout(() => {
    if (response.headersSent) return;
    response.writeHead(504, { 'content-type': JSON_CONTENT_TYPE, connection: 'close' }).end(errorBody(ErrorCode.GATEWAY_TIMEOUT, DEADLINE_MESSAGE));
    controller.abort(new Error(DEADLINE_MESSAGE));
  }, deadlineMs);
  timer.unref();
  response.once('close', () => {
    clearTimeout(timer);
    // The client left before the answer was written: what it asked for is of no use any more.
    if (!response.writableFinished) controller.abort(new ClientClosedError());
  });
}

/** Past Node's 16 KiB stack buffer for a string write. */
const LARGE_BODY_CHARS = 16 * 1024;

/**
 * The server's responses, handing Node a Buffer for a large string body. Given a string before the headers went out,
 * Node prepends the headers to it, and V8 copies the joined string whole into its young generation before it is
 * encoded and written: a 96 KB answer cost 96 KB more of young-generation allocation, a tenth of the gateway's in the
 * benchmark's scenario (c). A Buffer is encoded once, outside V8's heap, and written beside the headers (writev).
 */
export class GatewayResponse<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {
  override write(chunk: unknown, ...rest: unknown[]): boolean {
    const large = typeof chunk === 'string' && chunk.length >= LARGE_BODY_CHARS;
    const body = large ? Buffer.from(chunk, typeof rest[0] === 'string' ? (rest[0] as BufferEncoding) : 'utf8') : chunk;
    return (super.write as (chunk: unknown, ...rest: unknown[]) => boolean)(body, ...rest);
  }
}
