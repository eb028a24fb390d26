// Subscriptions end to end, with a real Redis and the real graphql-ws and graphql-sse clients: both fields over both
// transports with fields from every subgraph, authorization, release of everything a client held however it leaves,
// and a Redis restart. After every test the gateway's and the orders subgraph's graphql_active_subscriptions and
// Redis PUBSUB NUMSUB are back at their baseline (nothing open).
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { toGlobalId } from '@ordergraph/core';
import {
  graphql,
  readCounter,
  redisSubscriptions,
  sseClient,
  startRedis,
  subscribe,
  token,
  waitFor,
  wsClient,
  type Stream,
  type SubscriptionResult,
  type TestRedis,
} from '@ordergraph/testkit';
import type { WebSocket } from 'ws';
import { startSupergraph, type Supergraph } from '@ordergraph/testkit/e2e';

let redis: TestRedis;
let supergraph: Supergraph;
let admin: string;
let alice: string;
let bob: string;

beforeAll(async () => {
  redis = await startRedis();
  supergraph = await startSupergraph({ env: { REDIS_URL: redis.url } });
  [admin, alice, bob] = await Promise.all([token('ADMIN', 'user-0000'), token('USER', 'user-0001'), token('USER', 'user-0002')]);
});
afterAll(async () => {
  await supergraph?.stop();
  await redis?.close();
});

const metrics = (url: string) => url.replace(/\/graphql$/, '/metrics');
const counts = async () => ({
  gateway: await readCounter(metrics(supergraph.url), 'graphql_active_subscriptions'),
  orders: await readCounter(metrics(supergraph.subgraphUrl('orders')), 'graphql_active_subscriptions'),
  redis: await redisSubscriptions(redis.url, 'ordergraph:*'),
});
const BASELINE = { gateway: 0, orders: 0, redis: 0 };
/**
 * Waits until the gateway serves `streams` subscriptions, and orders `upstream` of them (subscribers of the same
 * operation, variables and visibility share one), on `channels` Redis channels.
 */
async function established(streams: number, channels: number, upstream = streams) {
  const expected = { gateway: streams, orders: upstream, redis: channels };
  await waitFor(async () => JSON.stringify(await counts()) === JSON.stringify(expected), `${streams} subscriptions on ${channels} channels`);
}
afterEach(async () => {
  await waitFor(async () => JSON.stringify(await counts()) === JSON.stringify(BASELINE), 'every count back at its baseline');
});

const api = (query: string, options: { variables?: Record<string, unknown>; token?: string } = {}) => graphql(supergraph.url, query, options);
const productId = (n: number) => toGlobalId('Product', `product-${String(n).padStart(4, '0')}`);

/** The selection every test asks for: fields of the orders subgraph, of users (user.name) and of the catalog. */
const ORDER = `id status total updatedAt user { id name } items { quantity product { id name } }`;
const STATUS_CHANGED = `subscription ($id: ID!) { orderStatusChanged(orderId: $id) { ${ORDER} } }`;
const NEW_ORDER = `subscription { newOrderCreated { ${ORDER} } }`;

async function mutate(query: string, variables: Record<string, unknown>, as: string) {
  const { body } = await api(query, { variables, token: as });
  expect(body.errors).toBeUndefined();
  return Object.values(body.data!)[0] as { id: string };
}
const createOrder = (as: string, items = [{ productId: productId(1), quantity: 2 }, { productId: productId(2), quantity: 1 }]) =>
  mutate(`mutation ($items: [LineItemInput!]!) { createOrder(input: { items: $items }) { id } }`, { items }, as);
const updateOrder = (id: string, input: Record<string, unknown>, as = admin) =>
  mutate(`mutation ($id: ID!, $input: UpdateOrderInput!) { updateOrder(id: $id, input: $input) { id } }`, { id, input }, as);
const updateOrderResult = (id: string, input: Record<string, unknown>, as = admin) =>
  mutate(`mutation ($id: ID!, $input: UpdateOrderInput!) { updateOrderResult(id: $id, input: $input) { ... on Order { id } } }`, { id, input }, as);
const cancelOrder = (id: string, as = admin) => mutate(`mutation ($id: ID!) { cancelOrder(id: $id) { id } }`, { id }, as);

/** The order as a query reads it now, with the subscriptions' selection: what an event of its last change carries. */
async function current(id: string) {
  const { body } = await api(`query ($id: ID!) { order(id: $id) { ${ORDER} } }`, { variables: { id }, token: admin });
  expect(body.errors).toBeUndefined();
  return body.data!.order;
}

const field = (results: SubscriptionResult[], name: string) => results.map((result) => result.data?.[name]);
const codes = (result: SubscriptionResult | undefined) => result?.errors?.map((error) => error.extensions?.['code']);

const TRANSPORTS = [
  { transport: 'graphql-ws', client: (as?: string) => wsClient(supergraph.url, as ? { token: as } : {}) },
  { transport: 'SSE (graphql-sse)', client: (as?: string) => sseClient(supergraph.url, as ? { token: as } : {}) },
];

describe.each(TRANSPORTS)('over $transport', ({ client }) => {
  it('orderStatusChanged: each status change (updateOrder, updateOrderResult, cancelOrder), with fields from every subgraph', async () => {
    const x = await createOrder(alice);
    const y = await createOrder(alice);
    const xForAlice = subscribe(client(alice), STATUS_CHANGED, { id: x.id });
    const xForAdmin = subscribe(client(admin), STATUS_CHANGED, { id: x.id });
    const yForAlice = subscribe(client(alice), STATUS_CHANGED, { id: y.id });
    await established(3, 2);

    await updateOrder(y.id, { items: [{ productId: productId(3), quantity: 1 }] }, alice); // not a status change
    await updateOrder(x.id, { status: 'PROCESSING' });
    const xProcessing = await current(x.id);
    await cancelOrder(x.id);
    const xCancelled = await current(x.id);
    await updateOrderResult(y.id, { status: 'PROCESSING' });
    const yProcessing = await current(y.id);

    expect(xProcessing).toMatchObject({ status: 'PROCESSING', user: { name: expect.any(String) }, items: [{ product: { name: expect.any(String) } }, {}] });
    expect(field(await xForAlice.received(2), 'orderStatusChanged')).toEqual([xProcessing, xCancelled]);
    expect(field(await xForAdmin.received(2), 'orderStatusChanged')).toEqual([xProcessing, xCancelled]);
    expect(field(await yForAlice.received(1), 'orderStatusChanged')).toEqual([yProcessing]);
    // Each event carries the updatedAt of its commit: clients order and deduplicate by it.
    expect(Date.parse(xCancelled.updatedAt)).toBeGreaterThanOrEqual(Date.parse(xProcessing.updatedAt));
    await Promise.all([xForAlice, xForAdmin, yForAlice].map((stream) => stream.close()));
  });

  it("newOrderCreated: a user's own new orders, and every new order for an administrator", async () => {
    const forAlice = subscribe(client(alice), NEW_ORDER);
    const forAdmin = subscribe(client(admin), NEW_ORDER);
    await established(2, 1);

    const bobs = await createOrder(bob);
    const alices = await createOrder(alice, [{ productId: productId(4), quantity: 3 }]);
    const [bobsOrder, alicesOrder] = [await current(bobs.id), await current(alices.id)];

    expect(field(await forAdmin.received(2), 'newOrderCreated')).toEqual([bobsOrder, alicesOrder]);
    expect(field(await forAlice.received(1), 'newOrderCreated')).toEqual([alicesOrder]);
    expect(alicesOrder).toMatchObject({ status: 'PENDING', user: { id: toGlobalId('User', 'user-0001') }, items: [{ quantity: 3 }] });
    await Promise.all([forAlice.close(), forAdmin.close()]);
    expect(forAlice.results).toHaveLength(1);
  });

  it("refuses another user's order as an unknown one (NOT_FOUND both), and anonymous callers (UNAUTHENTICATED)", async () => {
    const order = await createOrder(alice);
    const [foreign] = await subscribe(client(bob), STATUS_CHANGED, { id: order.id }).received(1);
    const [missing] = await subscribe(client(bob), STATUS_CHANGED, { id: toGlobalId('Order', 'no-such-order') }).received(1);
    const [anonymous] = await subscribe(client(), NEW_ORDER).received(1);
    expect([codes(foreign), codes(missing), codes(anonymous)]).toEqual([['NOT_FOUND'], ['NOT_FOUND'], ['UNAUTHENTICATED']]);
    expect(foreign!.data ?? null).toBeNull();
  });
});

describe('authentication of a connection', () => {
  const closeCode = (options: Parameters<typeof wsClient>[1]) =>
    new Promise<number>((resolve) => {
      subscribe(wsClient(supergraph.url, { ...options, onClosed: (event) => resolve(event.code) }), NEW_ORDER);
    });

  it('takes the token from the handshake Authorization header or the connection_init payload', async () => {
    const viaHeader = subscribe(wsClient(supergraph.url, { token: alice, via: 'header' }), NEW_ORDER);
    const viaPayload = subscribe(wsClient(supergraph.url, { token: alice, via: 'payload' }), NEW_ORDER);
    await established(2, 1, 1);
    const order = await createOrder(alice);
    expect(field(await viaHeader.received(1), 'newOrderCreated')[0].id).toBe(order.id);
    expect(field(await viaPayload.received(1), 'newOrderCreated')[0].id).toBe(order.id);
    await Promise.all([viaHeader.close(), viaPayload.close()]);
  });

  it('closes the connection with 4403 when the token does not verify, wherever it is sent', async () => {
    const expired = await token('USER', 'user-0001', { expiresIn: -60 });
    expect(await closeCode({ token: 'not.a.jwt', via: 'payload' })).toBe(4403);
    expect(await closeCode({ token: expired, via: 'header' })).toBe(4403);
  });

  it('answers an SSE subscription with a bad token with 401 before any stream', async () => {
    const response = await fetch(supergraph.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: 'Bearer not.a.jwt' },
      body: JSON.stringify({ query: NEW_ORDER }),
    });
    expect(response.status).toBe(401);
    expect((await response.json()).errors[0].extensions.code).toBe('UNAUTHENTICATED');
  });
});

describe('release', () => {
  it('one subscriber leaving (completing, dropping its connection, ending its event stream) never silences another', async () => {
    const order = await createOrder(alice);
    let socket: WebSocket | undefined;
    const completing = subscribe(wsClient(supergraph.url, { token: alice }), STATUS_CHANGED, { id: order.id });
    const dropping = subscribe(wsClient(supergraph.url, { token: admin, onOpened: (opened) => (socket = opened) }), STATUS_CHANGED, { id: order.id });
    const sse = sseClient(supergraph.url, { token: alice });
    const streaming = subscribe(sse, STATUS_CHANGED, { id: order.id });
    const staying = subscribe(wsClient(supergraph.url, { token: admin }), STATUS_CHANGED, { id: order.id });
    await established(4, 1, 2); // alice's two share a stream, and the administrators' two another

    await completing.close();
    socket!.terminate(); // no close frame: the TCP connection just goes
    sse.dispose();
    await waitFor(async () => (await counts()).orders === 1, 'three subscribers gone, and alice\'s stream with them');
    expect(await redisSubscriptions(redis.url, 'ordergraph:*')).toBe(1);

    await updateOrder(order.id, { status: 'PROCESSING' });
    expect(field(await staying.received(1), 'orderStatusChanged')[0].status).toBe('PROCESSING');
    await staying.close();
    expect([completing.results, dropping.results, streaming.results].map((results) => results.length)).toEqual([0, 0, 0]);
  });

  it('a few hundred abrupt disconnects bring every count back to its baseline', async () => {
    const order = await createOrder(alice);
    const WS_CONNECTIONS = 150;
    const SSE_STREAMS = 150;
    const sockets: WebSocket[] = [];
    const streams: Stream<SubscriptionResult>[] = [];
    for (let i = 0; i < WS_CONNECTIONS; i++) {
      const client = wsClient(supergraph.url, { token: i % 2 ? alice : admin, onOpened: (socket) => sockets.push(socket) });
      streams.push(subscribe(client, NEW_ORDER), subscribe(client, STATUS_CHANGED, { id: order.id }));
    }
    const sse = Array.from({ length: SSE_STREAMS }, () => sseClient(supergraph.url, { token: admin }));
    for (const client of sse) streams.push(subscribe(client, NEW_ORDER));
    // Two operations for two visibilities: four upstream streams.
    await established(2 * WS_CONNECTIONS + SSE_STREAMS, 2, 4);

    for (const socket of sockets) socket.terminate();
    for (const client of sse) client.dispose();
    // afterEach: gateway, orders and Redis back at their baseline.
    await Promise.all(streams.map((stream) => stream.ended));
  });

  it('a subscription refused when it starts leaves nothing behind', async () => {
    const order = await createOrder(alice);
    const refused = Array.from({ length: 20 }, (_, i) => subscribe(wsClient(supergraph.url, { token: bob }), STATUS_CHANGED, { id: i % 2 ? order.id : 'nope' }));
    for (const stream of refused) expect(codes((await stream.received(1))[0])).toEqual(['NOT_FOUND']);
  });
});

describe('sharing', () => {
  it('gives subscribers of the same operation, variables and visibility one upstream stream, and each every event', async () => {
    const [admin2, admin3] = await Promise.all([token('ADMIN', 'user-0003'), token('ADMIN', 'user-0004')]);
    const admins = [admin, admin2, admin3].map((as, i) => subscribe((i % 2 ? sseClient : wsClient)(supergraph.url, { token: as }), NEW_ORDER));
    const forAlice = subscribe(wsClient(supergraph.url, { token: alice }), NEW_ORDER);
    const forBob = subscribe(wsClient(supergraph.url, { token: bob }), NEW_ORDER);
    // The administrators see the same orders, so they share; a user never shares another user's stream.
    await established(5, 1, 3);
    // One connection to orders carries the three streams of three callers, each named in its own subscription.
    expect(await readCounter(metrics(supergraph.subgraphUrl('orders')), 'graphql_websocket_connections')).toBe(1);

    const [alices, bobs] = [await createOrder(alice), await createOrder(bob)];
    const [alicesOrder, bobsOrder] = [await current(alices.id), await current(bobs.id)];
    for (const stream of admins) expect(field(await stream.received(2), 'newOrderCreated')).toEqual([alicesOrder, bobsOrder]);
    expect(field(await forAlice.received(1), 'newOrderCreated')).toEqual([alicesOrder]);
    expect(field(await forBob.received(1), 'newOrderCreated')).toEqual([bobsOrder]);

    // The first subscriber leaving ends nothing for the others; the last one ends the stream upstream.
    await admins[0]!.close();
    await established(4, 1, 3);
    const later = await current((await createOrder(alice)).id);
    for (const stream of admins.slice(1)) expect(field(await stream.received(3), 'newOrderCreated')[2]).toEqual(later);
    await Promise.all([...admins.slice(1), forAlice, forBob].map((stream) => stream.close()));
    expect([forAlice, forBob].map((stream) => stream.results.length)).toEqual([2, 1]);
  });

  it('calls the subgraphs with the credential that lasts: the first subscriber\'s token expiring ends only its own stream', async () => {
    const shortLived = await token('ADMIN', 'user-0003', { expiresIn: '2s' });
    const first = subscribe(wsClient(supergraph.url, { token: shortLived }), NEW_ORDER);
    await established(1, 1, 1);
    const lasting = subscribe(wsClient(supergraph.url, { token: admin }), NEW_ORDER);
    await established(2, 1, 1);
    expect(codes((await first.received(1))[0])).toEqual(['UNAUTHENTICATED']); // its token expired
    await established(1, 1, 1);

    // user { name } and the products come from the users and catalog subgraphs, called for the stream as `admin`.
    const order = await current((await createOrder(alice)).id);
    expect(field(await lasting.received(1), 'newOrderCreated')).toEqual([order]);
    await lasting.close();
  });
});

describe('a Redis restart', () => {
  it('keeps every process up and every mutation succeeding; events of the outage are lost, later ones delivered', async () => {
    const order = await createOrder(alice);
    const overWs = subscribe(wsClient(supergraph.url, { token: alice }), STATUS_CHANGED, { id: order.id });
    const overSse = subscribe(sseClient(supergraph.url, { token: alice }), STATUS_CHANGED, { id: order.id });
    await established(2, 1, 1);

    await redis.stop();
    await updateOrder(order.id, { status: 'PROCESSING' }); // succeeds; its event is lost (at most once)
    for (const url of [supergraph.url, ...Object.values(supergraph.subgraphs)]) {
      expect((await fetch(url.replace(/\/graphql$/, '/healthz'))).status).toBe(200);
    }
    await redis.start();
    await established(2, 1, 1); // the orders subgraph subscribed its channel again

    await updateOrder(order.id, { status: 'SHIPPED' });
    for (const stream of [overWs, overSse]) {
      expect(field(await stream.received(1), 'orderStatusChanged').map((event) => event.status)).toEqual(['SHIPPED']);
    }
    await Promise.all([overWs.close(), overSse.close()]);
  });
});
