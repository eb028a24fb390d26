// Two orders-subgraph instances, each behind a gateway of its own, on one Redis and one datastore, as a scaled-out
// deployment: a mutation through either replica reaches the subscribers of both, and a replica that goes away takes
// nothing of the other's with it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toGlobalId } from '@ordergraph/core';
import { graphql, readCounter, redisSubscriptions, sseClient, startRedis, subscribe, token, waitFor, wsClient, type TestRedis } from '@ordergraph/testkit';
import { startReplicas, type Replica, type Replicated } from '@ordergraph/testkit/e2e';

let redis: TestRedis;
let deployment: Replicated;
let admin: string;
let alice: string;

beforeAll(async () => {
  redis = await startRedis();
  deployment = await startReplicas(2, { env: { REDIS_URL: redis.url } });
  [admin, alice] = await Promise.all([token('ADMIN', 'user-0000'), token('USER', 'user-0001')]);
});
afterAll(async () => {
  await deployment?.stop();
  await redis?.close();
});

const active = (url: string) => readCounter(url.replace(/\/graphql$/, '/metrics'), 'graphql_active_subscriptions');
const channels = () => redisSubscriptions(redis.url, 'ordergraph:*');
const NEW_ORDER = `subscription { newOrderCreated { id } }`;
async function placeOrder(gateway: string) {
  const { body } = await graphql(gateway, `mutation ($p: ID!) { createOrder(input: { items: [{ productId: $p, quantity: 1 }] }) { id } }`, {
    variables: { p: toGlobalId('Product', 'product-0008') },
    token: admin,
  });
  expect(body.errors).toBeUndefined();
  return body.data!.createOrder.id as string;
}
/** Waits until `replica`'s gateway and orders instance each serve `count` subscriptions. */
/** `count` subscribers on the replica's gateway, `upstream` streams on its orders (identical ones share one). */
const serving = (replica: Replica, count: number, upstream = count) =>
  waitFor(async () => (await active(replica.url)) === count && (await active(replica.orders)) === upstream, `${count} subscriptions, ${upstream} upstream`);
const ORDER = `id status user { name } items { product { name } }`;

async function mutate(gateway: string, query: string, variables: Record<string, unknown>) {
  const { body } = await graphql(gateway, query, { variables, token: admin });
  expect(body.errors).toBeUndefined();
  return Object.values(body.data!)[0] as { id: string; status: string };
}

describe('two replicas on one Redis', () => {
  it('deliver a mutation made through either replica to the subscribers of both, over both transports', async () => {
    const [a, b] = [deployment.replicas[0]!, deployment.replicas[1]!];
    expect(a.orders).not.toBe(b.orders);
    const createdOnB = subscribe(wsClient(b.url, { token: admin }), `subscription { newOrderCreated { ${ORDER} } }`);
    const createdOnA = subscribe(sseClient(a.url, { token: alice }), `subscription { newOrderCreated { ${ORDER} } }`);
    await waitFor(async () => (await active(b.orders)) === 1 && (await active(a.orders)) === 1, 'one subscriber on each replica');
    await waitFor(async () => (await redisSubscriptions(redis.url, 'ordergraph:*')) === 2, 'each replica subscribed the channel');

    const placed = await graphql(a.url, `mutation ($p: ID!) { createOrder(input: { items: [{ productId: $p, quantity: 1 }] }) { id } }`, {
      variables: { p: toGlobalId('Product', 'product-0007') },
      token: alice,
    });
    const orderId = placed.body.data!.createOrder.id as string;
    for (const stream of [createdOnB, createdOnA]) {
      expect((await stream.received(1))[0]!.data?.['newOrderCreated']).toMatchObject({
        id: orderId,
        status: 'PENDING',
        user: { name: expect.any(String) },
        items: [{ product: { name: expect.any(String) } }],
      });
    }

    const changedOnA = subscribe(wsClient(a.url, { token: alice }), `subscription ($id: ID!) { orderStatusChanged(orderId: $id) { ${ORDER} } }`, { id: orderId });
    const changedOnB = subscribe(sseClient(b.url, { token: alice }), `subscription ($id: ID!) { orderStatusChanged(orderId: $id) { ${ORDER} } }`, { id: orderId });
    await waitFor(async () => (await active(a.orders)) === 2 && (await active(b.orders)) === 2, 'two subscribers on each replica');
    await waitFor(async () => (await redisSubscriptions(redis.url, 'ordergraph:*')) === 4, 'each replica subscribed the order');
    const update = `mutation ($id: ID!, $status: OrderStatus!) { updateOrder(id: $id, input: { status: $status }) { id status } }`;
    await mutate(b.url, update, { id: orderId, status: 'PROCESSING' });
    await mutate(a.url, update, { id: orderId, status: 'SHIPPED' });
    for (const stream of [changedOnA, changedOnB]) {
      const events = await stream.received(2);
      expect(events.map((event) => event.data?.['orderStatusChanged'].status)).toEqual(['PROCESSING', 'SHIPPED']);
    }

    await Promise.all([createdOnA, createdOnB, changedOnA, changedOnB].map((stream) => stream.close()));
    await waitFor(async () => (await active(a.url)) + (await active(b.url)) + (await active(a.orders)) + (await active(b.orders)) === 0, 'all released');
    await waitFor(async () => (await redisSubscriptions(redis.url, 'ordergraph:*')) === 0, 'every channel released');
  });

  it('a gateway that goes away closes its WebSockets with 1001 and releases its upstream subscriptions and channels', async () => {
    const [a, b] = [deployment.replicas[0]!, deployment.replicas[1]!];
    let closeCode: number | undefined;
    const onB = subscribe(wsClient(b.url, { token: admin, onClosed: (event) => (closeCode = event.code) }), NEW_ORDER);
    const onA = subscribe(wsClient(a.url, { token: admin }), NEW_ORDER);
    await Promise.all([serving(a, 1), serving(b, 1)]);
    await waitFor(async () => (await channels()) === 2, 'each replica subscribed');

    await b.stopGateway();
    expect(closeCode).toBe(1001);
    await onB.ended;
    await waitFor(async () => (await active(b.orders)) === 0 && (await channels()) === 1, "orders B released the gateway's subscription");
    const id = await placeOrder(a.url);
    expect((await onA.received(1))[0]!.data?.['newOrderCreated'].id).toBe(id);
    await onA.close();
  });

  it('an orders instance that goes away fails its streams with SUBGRAPH_UNAVAILABLE, and everything is released', async () => {
    const a = deployment.replicas[0]!;
    const overWs = subscribe(wsClient(a.url, { token: admin }), NEW_ORDER);
    const overSse = subscribe(sseClient(a.url, { token: admin }), NEW_ORDER);
    await serving(a, 2, 1);

    await a.stopOrders();
    for (const stream of [overWs, overSse]) {
      const [last] = await stream.received(1);
      // The upstream's failure, without its detail (no addresses): the client subscribes again.
      expect(last!.errors).toEqual([
        { message: 'The service behind this subscription is unavailable; subscribe again', extensions: { code: 'SUBGRAPH_UNAVAILABLE' } },
      ]);
      await stream.ended;
    }
    await waitFor(async () => (await active(a.url)) === 0, 'the gateway released both streams');
    await waitFor(async () => (await channels()) === 0, 'no Redis channel left');
  });
});
