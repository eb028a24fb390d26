// Back-pressure: a subscriber that stops reading (its socket stays open, nothing is read from it) is disconnected once
// it has left SUBSCRIPTION_MAX_PENDING_EVENTS events unread, over graphql-ws (close 1008 with a reason) and over SSE
// (its stream cut), and a subscriber that reads keeps receiving every event meanwhile. Large events fill the
// connection's kernel buffers within a few hundred events.
import http from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { toGlobalId } from '@ordergraph/core';
import { SLOW_SUBSCRIBER_CLOSE } from '@ordergraph/gateway';
import { CREATED_CHANNEL } from '@ordergraph/orders';
import { countResults, publishOrderEvents, readCounter, redisClient, startRedis, token, waitFor, wsClient, type TestRedis } from '@ordergraph/testkit';
import type { WebSocket } from 'ws';
import { startSupergraph, type Supergraph } from '@ordergraph/testkit/e2e';

const NEW_ORDER = `subscription { newOrderCreated { id items { quantity } } }`;
const ADMIN = 'user-0000';
const LINE_ITEMS = 1_000; // about 20 KB an event
/** Far more than the kernel buffers of one loopback connection hold at LINE_ITEMS per event. */
const MAX_EVENTS = 4_000;

let redis: TestRedis;
let supergraph: Supergraph;
let publisher: ReturnType<typeof redisClient>;
let admin: string;

beforeAll(async () => {
  redis = await startRedis();
  supergraph = await startSupergraph({
    env: { REDIS_URL: redis.url },
    // Keep-alive pings would drop a peer that does not read too, later; these tests are about the buffer alone.
    gatewayEnv: { SUBSCRIPTION_MAX_PENDING_EVENTS: '10', WS_KEEPALIVE_MS: '600000' },
  });
  publisher = redisClient(redis.url);
  admin = await token('ADMIN', ADMIN);
});
afterAll(async () => {
  publisher?.disconnect();
  await supergraph?.stop();
  await redis?.close();
});

const metrics = () => supergraph.url.replace(/\/graphql$/, '/metrics');
const slowSubscribers = (transport: string) => readCounter(metrics(), 'graphql_slow_subscribers_total', { transport });
const activeSubscriptions = () => readCounter(metrics(), 'graphql_active_subscriptions');

/** Publishes events in batches, each read by `reader`, until the gateway has disconnected a slow `transport` subscriber. */
async function publishUntilDisconnected(reader: ReturnType<typeof countResults>, transport: string): Promise<void> {
  const before = await slowSubscribers(transport);
  while ((await slowSubscribers(transport)) === before) {
    if (reader.delivered >= MAX_EVENTS) throw new Error(`no ${transport} subscriber disconnected after ${MAX_EVENTS} events`);
    await publishOrderEvents(publisher, CREATED_CHANNEL, toGlobalId('User', ADMIN), 20, reader, { batch: 20, lineItems: LINE_ITEMS });
  }
}

it('closes a WebSocket that stops reading with 1008 and a reason; a reading subscriber misses nothing', { timeout: 180_000 }, async () => {
  let slowSocket: WebSocket | undefined;
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    const slow = wsClient(supergraph.url, { token: admin, onOpened: (socket) => (slowSocket = socket), onClosed: resolve });
    countResults(slow, { query: NEW_ORDER });
  });
  const readerClient = wsClient(supergraph.url, { token: admin });
  const reader = countResults(readerClient, { query: NEW_ORDER });
  try {
    await waitFor(async () => (await activeSubscriptions()) === 2, 'both subscriptions open');
    slowSocket!.pause(); // stops reading from the TCP connection; the socket stays open
    await publishUntilDisconnected(reader, 'websocket');
    await waitFor(async () => (await activeSubscriptions()) === 1, 'the slow subscription released');
    slowSocket!.resume();
    expect(await closed).toMatchObject({ code: SLOW_SUBSCRIBER_CLOSE.code, reason: SLOW_SUBSCRIBER_CLOSE.reason });
    expect(reader.errors).toEqual([]);
  } finally {
    reader.close();
    await readerClient.dispose();
  }
});

it('cuts an SSE stream that stops reading; a reading subscriber misses nothing', { timeout: 180_000 }, async () => {
  const url = new URL(supergraph.url);
  const request = http.request(url, {
    method: 'POST',
    headers: { accept: 'text/event-stream', 'content-type': 'application/json', authorization: `Bearer ${admin}` },
  });
  request.end(JSON.stringify({ query: NEW_ORDER }));
  const response = await new Promise<http.IncomingMessage>((resolve) => request.once('response', resolve));
  expect(response.statusCode).toBe(200);
  response.pause(); // reads nothing more; the connection stays open
  const ended = new Promise<void>((resolve) => response.socket.once('close', () => resolve()));
  const readerClient = wsClient(supergraph.url, { token: admin });
  const reader = countResults(readerClient, { query: NEW_ORDER });
  try {
    await waitFor(async () => (await activeSubscriptions()) === 2, 'both subscriptions open');
    await publishUntilDisconnected(reader, 'sse');
    await waitFor(async () => (await activeSubscriptions()) === 1, 'the slow subscription released');
    response.resume();
    await ended;
    expect(reader.errors).toEqual([]);
  } finally {
    reader.close();
    await readerClient.dispose();
  }
});
