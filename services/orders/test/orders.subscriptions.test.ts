// The orders subgraph's own subscription endpoint (graphql-ws at /graphql, as the gateway uses it), on a real Redis:
// the forwarded token is verified here, each event is authorized per subscriber, events follow commits, and a Redis
// outage never fails a mutation. Transports, cross-subgraph fields and replicas are covered end to end (e2e/).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toGlobalId } from '@ordergraph/core';
import { graphql, readCounter, redisSubscriptions, startRedis, subscribe, token, waitFor, wsClient, type TestRedis } from '@ordergraph/testkit';
import { CREATED_CHANNEL, statusChannel } from '../src/events.js';
import { ADMIN_LOCAL_ID, orderGlobalId, productGlobalId, seededOrders, startCatalog, startOrders, type Running } from './support.js';

const STATUS_CHANGED = `subscription ($id: ID!) { orderStatusChanged(orderId: $id) { id status updatedAt user { id } } }`;
const NEW_ORDER = `subscription { newOrderCreated { id status total user { id } items { product { id } quantity } } }`;
const UPDATE = `mutation ($id: ID!, $status: OrderStatus!) { updateOrder(id: $id, input: { status: $status }) { id status updatedAt } }`;
const CREATE = `mutation ($items: [LineItemInput!]!) { createOrder(input: { items: $items }) { id } }`;

let redis: TestRedis;
let catalog: Running;
let orders: Running;
let admin: string;
const seeded = seededOrders();

beforeAll(async () => {
  redis = await startRedis();
  catalog = await startCatalog();
  orders = await startOrders(catalog.url, { REDIS_URL: redis.url });
  admin = await token('ADMIN', ADMIN_LOCAL_ID);
});
afterAll(async () => {
  await orders?.stop();
  await catalog?.stop();
  await redis?.close();
});

const active = () => readCounter(orders.metricsUrl, 'graphql_active_subscriptions');
const subscribers = (channel: string) => redisSubscriptions(redis.url, channel);
const update = async (id: string, status: string) => {
  const { body } = await graphql(orders.url, UPDATE, { variables: { id, status }, token: admin });
  expect(body.errors).toBeUndefined();
  return body.data!.updateOrder as { id: string; status: string; updatedAt: string };
};

describe('a caller per subscription', () => {
  it('takes each subscription\'s caller from its extensions, as the gateway sends them on one connection for all', async () => {
    const [mine, theirs] = [seeded.take('PENDING'), seeded.take('PENDING')];
    const [owner, stranger] = await Promise.all([token('USER', mine.userLocalId), token('USER', theirs.userLocalId)]);
    const shared = wsClient(orders.url); // anonymous connection: the gateway's
    const as = (bearer: string) => ({ extensions: { authorization: `Bearer ${bearer}` } });
    const ownStream = subscribe(shared, STATUS_CHANGED, { id: orderGlobalId(mine) }, as(owner));
    const foreign = subscribe(shared, STATUS_CHANGED, { id: orderGlobalId(mine) }, as(stranger));
    const forged = subscribe(shared, STATUS_CHANGED, { id: orderGlobalId(mine) }, as('not-a-jwt'));
    expect((await foreign.received(1))[0]!.errors?.[0]?.extensions?.['code']).toBe('NOT_FOUND');
    try {
      expect(JSON.stringify(await forged.ended)).toContain('UNAUTHENTICATED');
      await waitFor(async () => (await subscribers(statusChannel(mine.localId))) === 1, 'the owner subscribed');
      await update(orderGlobalId(mine), 'PROCESSING');
      expect((await ownStream.received(1))[0]!.data?.['orderStatusChanged']).toMatchObject({ status: 'PROCESSING' });
    } finally {
      await ownStream.close();
      await shared.dispose();
    }
  });
});

describe('connection authentication', () => {
  it('closes a connection whose token does not verify with 4403', async () => {
    const closed = new Promise<number>((resolve) => {
      const client = wsClient(orders.url, { token: 'not-a-jwt', onClosed: (event) => resolve(event.code) });
      subscribe(client, NEW_ORDER);
    });
    expect(await closed).toBe(4403);
  });

  it('accepts the token in the handshake header too, and refuses anonymous subscribers field by field', async () => {
    const order = seeded.take('PENDING');
    const owner = await token('USER', order.userLocalId);
    const viaHeader = subscribe(wsClient(orders.url, { token: owner, via: 'header' }), STATUS_CHANGED, { id: orderGlobalId(order) });
    const anonymous = subscribe(wsClient(orders.url), NEW_ORDER);
    await anonymous.received(1);
    expect(anonymous.results[0]!.errors?.[0]?.extensions?.['code']).toBe('UNAUTHENTICATED');
    await waitFor(async () => (await subscribers(statusChannel(order.localId))) === 1, 'the owner subscribed');
    await update(orderGlobalId(order), 'PROCESSING');
    expect((await viaHeader.received(1))[0]!.data?.['orderStatusChanged']).toMatchObject({ status: 'PROCESSING' });
    await viaHeader.close();
  });
});

describe('orderStatusChanged', () => {
  it('delivers each status change in commit order with its updatedAt; a stranger and an unknown order are both NOT_FOUND', async () => {
    const order = seeded.take('PENDING');
    const id = orderGlobalId(order);
    const owner = await token('USER', order.userLocalId);
    const stranger = await token('USER', seeded.strangerTo(order));
    const events = subscribe(wsClient(orders.url, { token: owner }), STATUS_CHANGED, { id });
    const refused = subscribe(wsClient(orders.url, { token: stranger }), STATUS_CHANGED, { id });
    const unknown = subscribe(wsClient(orders.url, { token: owner }), STATUS_CHANGED, { id: toGlobalId('Order', 'no-such-order') });
    expect((await refused.received(1))[0]!.errors?.[0]?.extensions?.['code']).toBe('NOT_FOUND');
    expect((await unknown.received(1))[0]!.errors?.[0]?.extensions?.['code']).toBe('NOT_FOUND');
    await waitFor(async () => (await subscribers(statusChannel(order.localId))) === 1, 'the owner subscribed');

    const processing = await update(id, 'PROCESSING');
    const shipped = await update(id, 'SHIPPED');
    const received = await events.received(2);
    expect(received.map((result) => result.data?.['orderStatusChanged'])).toEqual([
      { id, status: 'PROCESSING', updatedAt: processing.updatedAt, user: { id: toGlobalId('User', order.userLocalId) } },
      { id, status: 'SHIPPED', updatedAt: shipped.updatedAt, user: { id: toGlobalId('User', order.userLocalId) } },
    ]);
    await events.close();
    await waitFor(async () => (await subscribers(statusChannel(order.localId))) === 0, 'the channel released');
  });
});

describe('newOrderCreated', () => {
  it("gives a user their own new orders only, and an administrator everyone's", async () => {
    const [alice, bob] = await Promise.all([token('USER', 'user-0011'), token('USER', 'user-0012')]);
    const forAlice = subscribe(wsClient(orders.url, { token: alice }), NEW_ORDER);
    const forAdmin = subscribe(wsClient(orders.url, { token: admin }), NEW_ORDER);
    await waitFor(async () => (await active()) === 2 && (await subscribers(CREATED_CHANNEL)) === 1, 'both subscribed');

    const items = [{ productId: productGlobalId('product-0001'), quantity: 2 }];
    const placed: string[] = [];
    for (const as of [bob, alice]) {
      const { body } = await graphql(orders.url, CREATE, { variables: { items }, token: as });
      expect(body.errors).toBeUndefined();
      placed.push(body.data!.createOrder.id);
    }
    const adminSaw = await forAdmin.received(2);
    expect(adminSaw.map((result) => result.data?.['newOrderCreated'].id)).toEqual(placed);
    const aliceSaw = await forAlice.received(1);
    expect(aliceSaw[0]!.data?.['newOrderCreated']).toMatchObject({
      id: placed[1],
      status: 'PENDING',
      user: { id: toGlobalId('User', 'user-0011') },
      items: [{ product: { id: productGlobalId('product-0001') }, quantity: 2 }],
    });
    // Bob's order was the first event on the channel; Alice, who had to skip it, saw only hers.
    expect(forAlice.results).toHaveLength(1);

    await Promise.all([forAlice.close(), forAdmin.close()]);
    await waitFor(async () => (await active()) === 0 && (await subscribers(CREATED_CHANNEL)) === 0, 'everything released');
  });
});

describe('a Redis outage', () => {
  it('never fails a mutation; the events of the outage are lost, and subscriptions resume once Redis is back', async () => {
    const order = seeded.take('PENDING');
    const id = orderGlobalId(order);
    const events = subscribe(wsClient(orders.url, { token: admin }), STATUS_CHANGED, { id });
    await waitFor(async () => (await subscribers(statusChannel(order.localId))) === 1, 'subscribed');
    const failedBefore = await readCounter(orders.metricsUrl, 'order_events_published_total', { result: 'failed' });

    await redis.stop();
    expect((await update(id, 'PROCESSING')).status).toBe('PROCESSING');
    expect(await readCounter(orders.metricsUrl, 'order_events_published_total', { result: 'failed' })).toBe(failedBefore + 1);
    expect((await fetch(orders.url.replace('/graphql', '/readyz'))).status).toBe(503);

    await redis.start();
    await waitFor(async () => (await subscribers(statusChannel(order.localId))) === 1, 'the subscriber connection resubscribed');
    await update(id, 'SHIPPED');
    const [first] = await events.received(1);
    expect(first!.data?.['orderStatusChanged'].status).toBe('SHIPPED');
    expect(events.results).toHaveLength(1);
    await events.close();
  });
});

describe('shutdown', () => {
  it('closes its WebSockets with 1001 (Going away) and releases their subscriptions', async () => {
    const instance = await startOrders(catalog.url, { REDIS_URL: redis.url });
    const closed = new Promise<number>((resolve) => {
      subscribe(wsClient(instance.url, { token: admin, onClosed: (event) => resolve(event.code) }), NEW_ORDER);
    });
    await waitFor(async () => (await readCounter(instance.metricsUrl, 'graphql_active_subscriptions')) === 1, 'subscribed');
    await instance.stop();
    expect(await closed).toBe(1001);
    await waitFor(async () => (await subscribers(CREATED_CHANNEL)) === 0, 'its Redis channel released');
  });
});
