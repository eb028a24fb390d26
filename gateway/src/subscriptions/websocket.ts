// Subscriptions over WebSocket at /graphql: graphql-ws's server (graphql-transport-ws, and legacy graphql-ws translated
// onto it) running each operation through the gateway runtime and its plugins, as Hive Gateway's CLI does.
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import { getGraphQLWSOptions, type GatewayRuntime } from '@graphql-hive/gateway-runtime';
import {
  ErrorCode,
  InvalidTokenError,
  REQUEST_ID_HEADER,
  requestIdFrom,
  viewerFromHeader,
  websocketAuthentication,
  withRequest,
  type Logger,
  type TokenVerifier,
} from '@ordergraph/core';
import { GraphQLError, type ExecutionArgs, type ExecutionResult, type FormattedExecutionResult } from 'graphql';
import { isAsyncIterable } from '@graphql-tools/utils';
import { CloseCode, DEPRECATED_GRAPHQL_WS_PROTOCOL, GRAPHQL_TRANSPORT_WS_PROTOCOL, type ServerOptions } from 'graphql-ws';
import { useServer, type Extra } from 'graphql-ws/use/ws';
import { WebSocketServer, type WebSocket } from 'ws';
import { CLIENT_HEADERS, clientName, clientVersion } from '../clients/identity.js';
import { createWebSocketFormatter } from '../security/errors.js';
import { resultJson } from './result-json.js';
import { MAX_BODY_BYTES } from '../shared/body-limit.js';
import { LegacyProtocolSocket } from './legacy-ws.js';

export interface WebSocketSettings {
  path: string;
  verify: TokenVerifier;
  maxSubscriptionsPerConnection: number;
  /** A client that has not sent connection_init by then is closed (4408). */
  connectionInitWaitTimeoutMs: number;
  /** Ping interval; a peer that has not answered the previous ping is dropped, and its subscriptions released. */
  keepAliveMs: number;
  /** The gateway's error policy (errors.ts), applied to everything the connection sends. */
  publicError: (error: unknown) => GraphQLError;
  logger: Logger;
}

/** How long a closing handshake may take at shutdown before the socket is cut (a dead peer never answers). */
const CLOSE_GRACE_MS = 2_000;

export interface WebSocketEndpoint {
  /** Closes every connection with 1001 (Going away) and stops accepting new ones. */
  dispose(): Promise<void>;
}

function tooManySubscriptions(limit: number): GraphQLError {
  return new GraphQLError(`At most ${limit} subscriptions may be active on one connection`, {
    extensions: { code: ErrorCode.RATE_LIMITED, limit },
  });
}

/**
 * The client names and versions of the connection_init payload, as headers: a browser's WebSocket cannot send headers,
 * so graphql-ws clients name themselves there (`connectionParams: { 'apollographql-client-name': 'web' }`). Only
 * values clients/identity.ts accepts are taken, so none can make a bad header.
 */
function clientHeaders(params: Readonly<Record<string, unknown>> | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [nameHeader, versionHeader] of CLIENT_HEADERS) {
    const [name, version] = [params?.[nameHeader], params?.[versionHeader]];
    if (typeof name === 'string' && clientName(name)) headers[nameHeader] = name;
    if (typeof version === 'string' && clientVersion(version)) headers[versionHeader] = version;
  }
  return headers;
}

/** The handshake's headers as one string each, with the connection's credential as `authorization`. */
function requestHeaders(request: http.IncomingMessage, authorization: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  if (authorization) headers['authorization'] = authorization;
  else delete headers['authorization'];
  return headers;
}

/** The connection's request ID, given to its handshake by onUpgrade: every operation on it runs under that ID. */
const requestIdOf = (request: http.IncomingMessage) => request.headers[REQUEST_ID_HEADER] as string;

/** What writtenEvents needs of a connection: a `ws` socket, or the legacy protocol's wrapper of one. */
interface EventSocket {
  readonly readyState: number;
  readonly OPEN: number;
  send(data: string, callback: (error?: Error) => void): void;
}

/**
 * A subscription's `next` messages, written to its connection here rather than by graphql-ws, which serialises each
 * result again for every subscriber: the payload is the JSON every subscriber of a shared event gets (resultJson,
 * written once per event), and only the message around it is built per subscriber. graphql-ws still reads the stream
 * returned for its end, its failure (its `error` message) and a client's `complete` (which returns it); each event is
 * read only once the previous one is written, as graphql-ws reads them, so the back-pressure bound still holds.
 */
function writtenEvents(
  socket: EventSocket,
  id: string,
  events: AsyncIterable<ExecutionResult>,
  format: (result: ExecutionResult) => FormattedExecutionResult,
): AsyncIterableIterator<never> {
  const iterator = events[Symbol.asyncIterator]();
  const prefix = `{"id":${JSON.stringify(id)},"type":"next","payload":`;
  const done: IteratorReturnResult<never> = { value: undefined as never, done: true };
  let returned = false;
  let start: (() => void) | undefined;
  // Callbacks rather than an async loop: this runs once per subscriber and event.
  const written = new Promise<IteratorResult<never>>((resolve, reject) => {
    const read = () => void iterator.next().then(write, reject);
    const write = (event: IteratorResult<ExecutionResult>) => {
      if (event.done || returned) return resolve(done);
      let message: string;
      try {
        const formatted = format(event.value);
        message = `${prefix}${formatted === event.value ? resultJson(event.value) : JSON.stringify(formatted)}}`;
      } catch (error) {
        return reject(error);
      }
      if (socket.readyState !== socket.OPEN) return read(); // as graphql-ws: nothing is written to a closing socket
      socket.send(message, (error) => (error ? reject(error) : read()));
    };
    start = read;
  });
  return {
    [Symbol.asyncIterator]() {
      return this;
    },
    next() {
      const reading = start;
      start = undefined;
      reading?.();
      return written;
    },
    async return() {
      returned = true;
      await iterator.return?.();
      return done;
    },
  };
}

function offeredProtocols(request: http.IncomingMessage): string[] {
  return (request.headers['sec-websocket-protocol'] ?? '').split(',').map((protocol) => protocol.trim());
}

export function serveWebSockets(httpServer: http.Server, runtime: GatewayRuntime, settings: WebSocketSettings): WebSocketEndpoint {
  const authentication = websocketAuthentication(settings.verify);
  const runtimeOptions = getGraphQLWSOptions<Record<string, unknown>, Extra>(runtime, (ctx) => {
    const { viewer, authorization } = authentication.identityOf(ctx);
    // The handshake's own client headers, when it has any, win over the payload's.
    const headers = { ...clientHeaders(ctx.connectionParams), ...requestHeaders(ctx.extra.request, authorization) };
    const url = new URL(ctx.extra.request.url ?? settings.path, `http://${headers['host'] ?? 'localhost'}`);
    // Each operation sees the connection's credential as its request's Authorization header, so it reaches the
    // subgraphs (HTTP entity fetches and the upstream WebSocket) exactly as an HTTP request's would.
    return { req: ctx.extra.request, socket: ctx.extra.socket, request: new runtime.fetchAPI.Request(url, { headers }), headers, viewer };
  });
  const { formatError, formatResult } = createWebSocketFormatter(settings.publicError);
  // The runtime throws what its plugins refuse before execution (a rate limit, a persisted query); graphql-ws would
  // close the whole connection on a throw (4500). The refusal is the operation's result instead, as over HTTP.
  const refusalsAsResults = (operate: NonNullable<ServerOptions['execute']>) => (args: ExecutionArgs) =>
    withRequest(requestIdOf((args.contextValue as { req: http.IncomingMessage }).req), async () => {
      try {
        return await operate(args);
      } catch (error) {
        const refusal = settings.publicError(error);
        if (refusal.extensions['code'] === ErrorCode.INTERNAL_SERVER_ERROR) settings.logger.error({ err: error }, 'websocket operation failed');
        return { errors: [refusal] };
      }
    });
  const options: ServerOptions<Record<string, unknown> | undefined, Extra> = {
    ...runtimeOptions,
    execute: refusalsAsResults(runtimeOptions.execute!),
    subscribe: refusalsAsResults(runtimeOptions.subscribe!),
    connectionInitWaitTimeout: settings.connectionInitWaitTimeoutMs,
    onConnect: authentication.onConnect,
    onNext: (ctx, _id, _payload, _args, result) => formatResult(result, requestIdOf(ctx.extra.request)),
    // A subscription's events are written here rather than by graphql-ws (writtenEvents); onNext formats the rest.
    onOperation: (ctx, id, _payload, _args, result) =>
      isAsyncIterable<ExecutionResult>(result) ? writtenEvents(ctx.extra.socket, id, result, (event) => formatResult(event, requestIdOf(ctx.extra.request))) : undefined,
    onError: (ctx, _id, _payload, errors) => errors.map((error) => formatError(error, requestIdOf(ctx.extra.request))),
    async onSubscribe(ctx, id, payload) {
      // Counted before the first await: ctx.subscriptions holds every operation started and not yet finished, this one
      // included, and graphql-ws starts each message's as it arrives. Counted after an await, a burst of subscribes on
      // one socket saw each other's and refused all of them, the first ones included.
      if (Object.keys(ctx.subscriptions).length > settings.maxSubscriptionsPerConnection) {
        return [tooManySubscriptions(settings.maxSubscriptionsPerConnection)];
      }
      // Each operation is authenticated when it starts, as an HTTP request is: a token that has expired since
      // connection_init closes the connection (4403), for the client to reconnect with a fresh one.
      try {
        await viewerFromHeader(settings.verify, authentication.identityOf(ctx).authorization);
      } catch (error) {
        if (!(error instanceof InvalidTokenError)) throw error; // the key set could not be read: not the caller's fault
        ctx.extra.socket.close(CloseCode.Forbidden, 'Forbidden');
        return [new GraphQLError(error.message, { extensions: { code: ErrorCode.UNAUTHENTICATED } })];
      }
      // The runtime loads the supergraph when its first HTTP request arrives; a WebSocket may come first.
      await runtime.getSchema();
      return runtimeOptions.onSubscribe!(ctx, id, payload);
    },
  };

  // A message is bounded as an HTTP body is (ws closes with 1009 past it; its default is 100 MiB).
  const current = new WebSocketServer({ noServer: true, maxPayload: MAX_BODY_BYTES });
  const server = useServer(options, current, settings.keepAliveMs);
  const legacy = new WebSocketServer({ noServer: true, maxPayload: MAX_BODY_BYTES, handleProtocols: () => DEPRECATED_GRAPHQL_WS_PROTOCOL });
  // The handshake's answer names the connection's request ID, as an HTTP response does.
  const returnRequestId = (headers: string[], request: http.IncomingMessage) => headers.push(`${REQUEST_ID_HEADER}: ${requestIdOf(request)}`);
  current.on('headers', returnRequestId);
  legacy.on('headers', returnRequestId);
  legacy.on('connection', (socket, request) => current.emit('connection', new LegacyProtocolSocket(socket), request));
  // graphql-ws reports an error on a socket (a frame over maxPayload, which ws has already answered with 1009) with
  // console.error, a line no log reader parses; after its own listener is added, it is replaced by one that logs JSON
  // and closes the socket as graphql-ws does in production (a no-op once ws has closed it).
  current.on('connection', (socket: WebSocket | LegacyProtocolSocket, request: http.IncomingMessage) => {
    socket.removeAllListeners('error');
    socket.on('error', (error: Error) => {
      settings.logger.warn({ err: error, requestId: requestIdOf(request) }, 'websocket connection error');
      socket.close(CloseCode.InternalServerError, 'Internal server error');
    });
  });

  const onUpgrade = (request: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    if (new URL(request.url ?? '/', 'http://localhost').pathname !== settings.path) {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n');
      return;
    }
    // One ID for the connection (the client's when well-formed): its operations' log lines, subgraph calls and errors
    // carry it.
    request.headers[REQUEST_ID_HEADER] = requestIdFrom(request.headers[REQUEST_ID_HEADER] as string | undefined);
    // graphql-transport-ws when offered (graphql-ws refuses any other subprotocol with 4406); the legacy one otherwise.
    const protocols = offeredProtocols(request);
    const target =
      protocols.includes(DEPRECATED_GRAPHQL_WS_PROTOCOL) && !protocols.includes(GRAPHQL_TRANSPORT_WS_PROTOCOL) ? legacy : current;
    target.handleUpgrade(request, socket, head, (ws) => target.emit('connection', ws, request));
  };
  httpServer.on('upgrade', onUpgrade);

  return {
    async dispose() {
      httpServer.off('upgrade', onUpgrade);
      const sockets = [...current.clients, ...legacy.clients];
      for (const socket of legacy.clients) socket.close(1001, 'Going away');
      const fuse = setTimeout(() => sockets.forEach((socket) => socket.terminate()), CLOSE_GRACE_MS);
      await Promise.all([server.dispose(), new Promise((resolve) => legacy.close(resolve))]);
      clearTimeout(fuse);
    },
  };
}
