// Long-lived subscriptions through the gateway retain nothing per delivered event: thousands of events reach a
// graphql-ws and an SSE subscription that stay open (with a field from the users subgraph, fetched per event), and
// the heap of this process (the gateway and the subgraphs behind it) after a forced collection does not grow with them.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { toGlobalId } from '@ordergraph/core';
import { CREATED_CHANNEL } from '@ordergraph/orders';
import {
  countResults,
  publishOrderEvents,
  readCounter,
  redisClient,
  settledHeapBytes,
  sseClient,
  startRedis,
  token,
  waitFor,
  wsClient,
  type TestRedis,
} from '@ordergraph/testkit';
import { startSupergraph, type Supergraph } from '@ordergraph/testkit/e2e';

const NEW_ORDER = `subscription { newOrderCreated { id status updatedAt user { id name } } }`;
/** The bound: what a delivered event may leave behind, on average. */
const MAX_BYTES_PER_EVENT = 50;
const ADMIN = 'user-0000';
const ROUNDS = 4;
const EVENTS_PER_ROUND = 1_500;

let redis: TestRedis;
let supergraph: Supergraph;
let publisher: ReturnType<typeof redisClient>;
const ordersMetrics = () => supergraph.subgraphUrl('orders').replace(/\/graphql$/, '/metrics');

beforeAll(async () => {
  redis = await startRedis();
  supergraph = await startSupergraph({ env: { REDIS_URL: redis.url } });
  publisher = redisClient(redis.url);
});
afterAll(async () => {
  publisher?.disconnect();
  await supergraph?.stop();
  await redis?.close();
});

it('keeps the heap flat while thousands of events reach open WebSocket and SSE subscriptions', { timeout: 300_000 }, async () => {
  const admin = await token('ADMIN', ADMIN);
  const ws = wsClient(supergraph.url, { token: admin });
  const sse = sseClient(supergraph.url, { token: admin });
  const overWs = countResults(ws, { query: NEW_ORDER });
  const overSse = countResults(sse, { query: NEW_ORDER });
  // Events go out in batches; the second subscription has received each batch when the first has, or soon after.
  const deliver = async (count: number) => {
    const target = overSse.delivered + count;
    await publishOrderEvents(publisher, CREATED_CHANNEL, toGlobalId('User', ADMIN), count, overWs);
    await overSse.reach(target);
  };
  try {
    // The two share one stream on orders (same operation, both administrators), and each its own at the gateway.
    const active = (metrics: string) => readCounter(metrics, 'graphql_active_subscriptions');
    const gatewayMetrics = supergraph.url.replace(/\/graphql$/, '/metrics');
    await waitFor(async () => (await active(gatewayMetrics)) === 2 && (await active(ordersMetrics())) === 1, 'both subscriptions open');
    // The heap after each round of events, the first round warming every cache and compiled path. A leak grows it in
    // every round; a hash table that resized (WeakMap tables keyed by per-event objects) grows it in some rounds only,
    // by up to about 2 MB (564 B per event seen on Node 22): so the quietest round is held to the bound.
    const heap: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      await deliver(EVENTS_PER_ROUND);
      heap.push(await settledHeapBytes());
    }
    const growth = heap.slice(1).map((bytes, i) => (bytes - heap[i]!) / (2 * EVENTS_PER_ROUND));
    expect([...overWs.errors, ...overSse.errors]).toEqual([]);
    expect([overWs.delivered, overSse.delivered]).toEqual([ROUNDS * EVENTS_PER_ROUND, ROUNDS * EVENTS_PER_ROUND]);
    expect(Math.min(...growth)).toBeLessThan(MAX_BYTES_PER_EVENT);
  } finally {
    overWs.close();
    overSse.close();
    await ws.dispose();
    sse.dispose();
  }
});
