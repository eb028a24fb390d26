// Order events, published once a creation or status change has committed, carried by Redis pub/sub to every replica's
// subscribers (in-process without REDIS_URL); at most once: an event published while Redis is down is dropped.
import { setMaxListeners } from 'node:events';
import { Repeater, SlidingBuffer } from '@repeaterjs/repeater';
import { createRedisEventTarget } from '@graphql-yoga/redis-event-target';
import { Counter, type Registry } from 'prom-client';
import { createRedis, currentTraceCarrier, pingRedis, recordDelivery, type Logger, type RedisTarget, type TraceCarrier } from '@ordergraph/core';
import type { OrderDoc } from './store/orders.js';

/** What order writes publish, once the write has committed. Never throws and never makes the writer wait. */
export interface OrderEventPublisher {
  orderCreated(order: OrderDoc): void;
  statusChanged(order: OrderDoc): void;
}

export interface OrderEvents extends OrderEventPublisher {
  /** Orders as they are created, those `accept` lets through; returning the iterator stops listening. */
  created(accept: (order: OrderDoc) => boolean): AsyncIterableIterator<OrderDoc>;
  /** The order (by local id) after each status change that `accept` lets through. */
  statusChanges(orderLocalId: string, accept: (order: OrderDoc) => boolean): AsyncIterableIterator<OrderDoc>;
  /** Throws when the carrier (Redis) does not answer. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Versions only grow: lets through events `accept` takes that are newer than `seenVersion` and the last one let
 * through, dropping one that reaches this replica after a newer one, so a subscriber sees changes in commit order.
 */
export function inCommitOrder(seenVersion: number, accept: (order: OrderDoc) => boolean): (order: OrderDoc) => boolean {
  let seen = seenVersion;
  return (order) => {
    if (order.version <= seen || !accept(order)) return false;
    seen = order.version;
    return true;
  };
}

/** Redis channels: one for creations, one per order for its status changes. */
export const CREATED_CHANNEL = 'ordergraph:order-created';
export const statusChannel = (orderLocalId: string) => `ordergraph:order-status:${orderLocalId}`;

/** A subscriber that reads more slowly than events arrive keeps the newest this many; older ones are dropped. */
const SUBSCRIBER_BUFFER = 100;

/** What travels on a channel: the order, and the trace context of the write that changed it (W3C headers). */
interface OrderEvent {
  order: OrderDoc;
  trace?: TraceCarrier | undefined;
}

type Listener = (event: Event) => void;
interface Carrier {
  addEventListener(channel: string, listener: Listener): void;
  removeEventListener(channel: string, listener: Listener): void;
  dispatchEvent(event: CustomEvent<OrderEvent>): void;
}

// With tracing on, each event carries its writer's trace context, and each delivery is a span linked to it.
function orderEvents(carrier: Carrier, extra: Pick<OrderEvents, 'ping' | 'close'>): OrderEvents {
  const publish = (channel: string, order: OrderDoc) =>
    carrier.dispatchEvent(new CustomEvent(channel, { detail: { order, trace: currentTraceCarrier() } }));
  // One listener per subscriber; the carrier subscribes a channel for its first listener and unsubscribes it after
  // its last, so one subscriber leaving never silences another.
  const listen = (channel: string, accept: (order: OrderDoc) => boolean) =>
    new Repeater<OrderDoc>((push, stop) => {
      const listener: Listener = (event) => {
        const { order, trace } = (event as CustomEvent<OrderEvent>).detail;
        if (!accept(order)) return;
        recordDelivery('order event delivered', trace, { 'messaging.destination.name': channel, 'ordergraph.order.id': order._id });
        void push(order);
      };
      carrier.addEventListener(channel, listener);
      void stop.then(() => carrier.removeEventListener(channel, listener));
    }, new SlidingBuffer(SUBSCRIBER_BUFFER));
  return {
    orderCreated: (order) => publish(CREATED_CHANNEL, order),
    statusChanged: (order) => publish(statusChannel(order._id), order),
    created: (accept) => listen(CREATED_CHANNEL, accept),
    statusChanges: (orderLocalId, accept) => listen(statusChannel(orderLocalId), accept),
    ...extra,
  };
}

/** Events within this process only: for development without Redis (announced at start). */
export function inProcessOrderEvents(): OrderEvents {
  const target = new EventTarget();
  setMaxListeners(0, target); // one listener per subscriber: many is normal, not a leak
  return orderEvents(target, { ping: async () => {}, close: async () => {} });
}

/** On the wire an event is the order's JSON, with its trace context (when traced) under `_trace`. */
function serializeEvent(message: unknown): string {
  const { order, trace } = message as OrderEvent;
  return JSON.stringify(trace ? { ...order, _trace: trace } : order);
}

/** JSON turns dates into strings; the order's resolvers expect Dates again. */
function parseEvent(message: string): OrderEvent {
  const { _trace: trace, ...order } = JSON.parse(message) as OrderDoc & { _trace?: TraceCarrier };
  return { order: { ...order, createdAt: new Date(order.createdAt), updatedAt: new Date(order.updatedAt) }, trace };
}

/**
 * Events through Redis pub/sub, with @graphql-yoga/redis-event-target counting listeners per channel. Hive Gateway's
 * RedisPubSub (@graphql-hive/pubsub 2.2.1) does not: it unsubscribes a channel when any one listener stops. In a Redis
 * Cluster, classic PUBLISH reaches subscribers on every node (the cluster bus forwards it), so replicas subscribed
 * through different nodes all get each event; sharded pub/sub would confine a channel to one shard, which per-order
 * channels do not need at our volume.
 */
export function redisOrderEvents(redis: RedisTarget, logger: Logger, registry: Registry): OrderEvents {
  const published = new Counter({
    name: 'order_events_published_total',
    help: 'Order events handed to Redis (ok) or dropped because Redis was unreachable (failed)',
    labelNames: ['result'],
    registers: [registry],
  });
  // Publishing fails at once while Redis is down instead of queueing: the event is lost either way (at most once),
  // and a queue would deliver stale events after the outage, behind newer ones.
  const publisher = createRedis(redis, logger, { enableOfflineQueue: false }, { registry, connection: 'events-publisher' });
  // The subscriber waits out outages: its channels are subscribed again when it reconnects.
  const subscriber = createRedis(redis, logger, { maxRetriesPerRequest: null, commandTimeout: undefined }, { registry, connection: 'events-subscriber' });
  const failed = (what: string, channel: string) => (error: unknown) =>
    logger.warn({ err: error, channel }, `redis ${what} failed`);
  // The event target fires its Redis commands without awaiting them; these settle every one, so an outage is
  // logged (and counted) instead of surfacing as an unhandled rejection or a failed mutation.
  const publishClient = {
    publish: (channel: string, message: string) =>
      publisher.publish(channel, message).then(
        () => published.inc({ result: 'ok' }),
        (error: unknown) => {
          published.inc({ result: 'failed' });
          failed('publish (the event is lost)', channel)(error);
        },
      ),
  };
  const subscribeClient = {
    on: (event: 'message', listener: (channel: string, message: string) => void) => subscriber.on(event, listener),
    subscribe: (channel: string) => subscriber.subscribe(channel).catch(failed('subscribe', channel)),
    unsubscribe: (channel: string) => subscriber.unsubscribe(channel).catch(failed('unsubscribe', channel)),
  };
  // Typed by the event target's own ioredis major, which may differ from ours: it calls only the methods above.
  type Client = Parameters<typeof createRedisEventTarget>[0]['publishClient'];
  const target = createRedisEventTarget<CustomEvent<OrderEvent>>({
    publishClient: publishClient as unknown as Client,
    subscribeClient: subscribeClient as unknown as Client,
    serializer: { stringify: serializeEvent, parse: parseEvent },
  });
  return orderEvents(target as unknown as Carrier, {
    async ping() {
      await pingRedis(publisher);
      // A connection in subscriber mode answers PING differently; its state says enough.
      if (subscriber.status !== 'ready') throw new Error(`redis subscriber connection is ${subscriber.status}`);
    },
    async close() {
      publisher.disconnect();
      subscriber.disconnect();
    },
  });
}
