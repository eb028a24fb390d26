// Subscriptions through the gateway: how they reach the subgraph that serves them, the gauge of open streams, and how
// a stream ends when its caller's token expires, when the supergraph changes and when the gateway shuts down.
import type { Socket } from 'node:net';
import type { IncomingMessage } from 'node:http';
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';
import {
  ErrorCode,
  SUBSCRIBER_EXTENSION,
  subscriptionMetrics,
  isPublicCode,
  tokenExpiresAt,
  trackSubscription,
  type Logger,
} from '@ordergraph/core';
import { GraphQLError, type ExecutionResult } from 'graphql';
import { Counter, type Registry } from 'prom-client';
import type { WebSocket } from 'ws';
import { MULTIPART_SUBSCRIPTION_TYPE, acceptsMultipartSubscription } from './multipart.js';
import { TRANSPORT_FAILURES } from '../subgraphs/upstream.js';

/**
 * The HTTP transport's option for subscriptions: they go over graphql-ws to the subgraph's own /graphql (its HTTP
 * location as ws://), one connection per subgraph however many callers; each subscription names its caller itself
 * (SUBSCRIBER_EXTENSION, which the subgraph verifies). The connection closes once its last subscription ends.
 */
export const SUBSCRIPTION_TRANSPORT_OPTIONS = { subscriptions: { kind: 'ws' } };

interface HttpContext {
  request?: Request;
  /** Node's request, for operations that came over HTTP (and the upgrade request of a WebSocket). */
  req?: IncomingMessage;
  /** The connection of an operation that came over WebSocket (websocket.ts). */
  socket?: WebSocket;
}

/**
 * How a subscriber that stopped reading is disconnected: a WebSocket with this close code and reason (1008, policy
 * violation; graphql-ws clients reconnect), an SSE stream by cutting its connection (it has no close frame).
 */
export const SLOW_SUBSCRIBER_CLOSE = { code: 1008, reason: 'Subscriber too slow: events were not read' } as const;

export interface SubscriptionTracking {
  /** graphql_active_subscriptions: every stream the gateway serves, over WebSocket, SSE or multipart HTTP. */
  plugin: GatewayPlugin;
  /**
   * Cuts the connection of every open HTTP stream (SSE, multipart), the counterpart of a WebSocket's 1001: graphql-sse
   * clients retry a stream that ends without `complete`, and so reconnect to another replica.
   */
  cutEventStreams(): void;
}

type EventError = { extensions?: Record<string, unknown>; path?: readonly unknown[] } | undefined;

/**
 * An event's entity fetch that got no answer (users or catalog refused, reset or not JSON): its error sits at the
 * entity's field, below the subscription's own, and the error policy codes it there as in a query (errors.ts:
 * SUBGRAPH_UNAVAILABLE). Not the stream's upstream failing, which is what upstreamFailure rewrites.
 */
const entityFetchFailure = (error: EventError) => TRANSPORT_FAILURES.has(error?.extensions?.['code']) && (error?.path?.length ?? 0) > 1;

/** An error an event keeps as it is: one of ours, or a failed entity fetch at its field. */
const kept = (error: EventError) => isPublicCode(error?.extensions?.['code']) || entityFetchFailure(error);

/**
 * What a client sees when the upstream of its subscription fails (the subgraph instance went away, say): Hive reports
 * the transport's own error ("connect ECONNREFUSED <address>"), which has no code and names internal addresses.
 */
function upstreamFailure(logger: Logger) {
  return (error: unknown) => {
    if (kept(error as EventError)) return error;
    logger.warn({ err: error }, 'subscription upstream failed');
    return new GraphQLError('The service behind this subscription is unavailable; subscribe again', {
      extensions: { code: ErrorCode.SUBGRAPH_UNAVAILABLE },
    });
  };
}

/**
 * A stream lasts as long as the token it was opened with, as access by HTTP does: when the token expires, a last result
 * says so and the stream completes (the subgraphs would refuse the expired token on every later event anyway).
 */
function tokenDeadline(request: Request | undefined) {
  const at = tokenExpiresAt(request?.headers.get('authorization'));
  if (at === undefined) return {};
  return { deadline: { at, last: { errors: [new GraphQLError('Token expired', { extensions: { code: ErrorCode.UNAUTHENTICATED } })] } } };
}

/** Whether an HTTP request accepts an event stream (a missing Accept does). */
function acceptsEventStream(request: Request): boolean {
  const accept = request.headers.get('accept');
  if (!accept) return true;
  return accept.split(',').some((range) => ['text/event-stream', 'text/*', '*/*'].includes(range.split(';')[0]!.trim().toLowerCase()));
}

/** Whether an HTTP request accepts a stream in a form the gateway serves: an event stream or Apollo's multipart. */
const acceptsStream = (request: Request) => acceptsEventStream(request) || acceptsMultipartSubscription(request);

/**
 * What a stream open across a supergraph reload ends with: the runtime disposes the previous supergraph's upstream
 * connections, which would end it with a bare `complete` the client cannot tell from the source's end.
 */
const schemaReloaded = (): ExecutionResult => ({
  errors: [
    new GraphQLError('The gateway switched to a new supergraph; subscribe again', { extensions: { code: ErrorCode.SUBSCRIPTION_SCHEMA_RELOAD } }),
  ],
});

type EndStream = (last: ExecutionResult, reason: string) => void;

const notAcceptable = () =>
  new GraphQLError(`Subscriptions over HTTP are served as text/event-stream or ${MULTIPART_SUBSCRIPTION_TYPE} (or over WebSocket)`, {
    extensions: { code: ErrorCode.NOT_ACCEPTABLE, http: { status: 406, headers: { accept: `text/event-stream, ${MULTIPART_SUBSCRIPTION_TYPE}` } } },
  });

export interface SubscriptionLimits {
  /** Events a subscriber may leave unread before it is disconnected. */
  maxPendingEvents: number;
}

export function subscriptionTracking(registry: Registry, logger: Logger, limits: SubscriptionLimits): SubscriptionTracking {
  const gauge = subscriptionMetrics(registry);
  const mapError = upstreamFailure(logger);
  const eventStreams = new Set<Socket>();
  const slow = new Counter({
    name: 'graphql_slow_subscribers_total',
    help: 'Subscribers disconnected because they left SUBSCRIPTION_MAX_PENDING_EVENTS events unread',
    labelNames: ['transport'],
    registers: [registry],
  });
  const tooSlow = new GraphQLError(SLOW_SUBSCRIBER_CLOSE.reason, { extensions: { code: ErrorCode.SUBSCRIBER_TOO_SLOW } });
  // Every open stream, to end with SUBSCRIPTION_SCHEMA_RELOAD when the supergraph changes; `supergraphs` counts the
  // changes, so a stream subscribed on the previous supergraph but started after the change ends at once too.
  const open = new Set<EndStream>();
  let served: unknown;
  let supergraphs = 0;
  return {
    plugin: {
      // The caller of each upstream subscription travels with it, not with the pooled connection.
      onSubgraphExecute({ executionRequest }) {
        if (executionRequest.operationType !== 'subscription') return;
        const authorization = (executionRequest.context as HttpContext | undefined)?.request?.headers.get('authorization');
        if (authorization) executionRequest.extensions = { ...executionRequest.extensions, [SUBSCRIBER_EXTENSION]: authorization };
      },
      onSchemaChange({ schema }) {
        if (schema === served) return;
        if (served !== undefined) {
          supergraphs++;
          for (const end of open) end(schemaReloaded(), 'reload');
        }
        served = schema;
      },
      onSubscribe: ({ context, setResultAndStopExecution }) => {
        // Refused before it is started: yoga would subscribe upstream first and only then find it cannot answer (406).
        const transport = context as HttpContext;
        if (transport.request && !transport.socket && !acceptsStream(transport.request)) {
          setResultAndStopExecution({ errors: [notAcceptable()] });
          return undefined;
        }
        const subscribedOn = supergraphs;
        return {
          onSubscribeResult({ result, setResult }) {
            if (!(Symbol.asyncIterator in result)) return;
            const { request, req, socket: webSocket } = context as HttpContext;
            // Over HTTP, yoga streams events when the client accepts them, else this gateway's multipart processor does.
            const overHttp = request && !webSocket ? (acceptsEventStream(request) ? 'sse' : 'multipart') : undefined;
            const socket = overHttp ? req?.socket : undefined;
            if (socket) eventStreams.add(socket);
            let endStream: EndStream | undefined;
            const onStart = (end: EndStream) => {
              if (subscribedOn !== supergraphs) end(schemaReloaded(), 'reload');
              else open.add((endStream = end));
            };
            const onEnd = () => {
              if (socket) eventStreams.delete(socket);
              if (endStream) open.delete(endStream);
            };
            // The connection carries nothing the subscriber reads any more: it goes, with every stream on it.
            const onOverflow = () => {
              const transport = overHttp ?? 'websocket';
              slow.inc({ transport });
              logger.warn({ transport, maxPendingEvents: limits.maxPendingEvents }, 'slow subscriber disconnected');
              if (socket) socket.destroy();
              else webSocket?.close(SLOW_SUBSCRIBER_CLOSE.code, SLOW_SUBSCRIBER_CLOSE.reason);
            };
            const overflow = { maxPending: limits.maxPendingEvents, error: tooSlow, onOverflow };
            setResult(trackSubscription(result, gauge, { onStart, onEnd, mapError, overflow, ...tokenDeadline(request) }));
            // The Rust planner's executor reports an upstream that failed mid-stream as an event's error, not a throw.
            return {
              onNext({ result: event, setResult: setEvent }) {
                const errors = (event as ExecutionResult).errors;
                if (errors?.some((error) => !kept(error))) setEvent({ ...(event as ExecutionResult), errors: errors.map(mapError) });
              },
            };
          },
        };
      },
      // Whatever else refuses a stream after it started (no processor for the client's Accept): it ends here, with
      // its upstream subscription, instead of living on unread.
      onResultProcess({ result, resultProcessor }) {
        if (!resultProcessor && typeof result === 'object' && Symbol.asyncIterator in result) void result[Symbol.asyncIterator]().return?.();
      },
    },
    cutEventStreams() {
      for (const socket of eventStreams) socket.destroy();
    },
  };
}
