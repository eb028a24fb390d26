// WebSocket connections at the gateway: the legacy graphql-ws subprotocol, the bounds on a connection (subscriptions
// per connection, connection_init in time, answering pings) and graceful shutdown. Without REDIS_URL: the orders
// subgraph's in-process event fallback carries the events here.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { toGlobalId } from '@ordergraph/core';
import { graphql, readCounter, sseClient, subscribe, toWsUrl, token, waitFor, wsClient, type Stream, type SubscriptionResult } from '@ordergraph/testkit';
import { WebSocket } from 'ws';
import { startSupergraph, type Supergraph } from '@ordergraph/testkit/e2e';

const INIT_TIMEOUT_MS = 1_000;
const KEEPALIVE_MS = 1_000;

let supergraph: Supergraph | undefined;
let url: string;
let admin: string;

beforeAll(async () => {
  supergraph = await startSupergraph({
    gatewayEnv: { WS_CONNECTION_INIT_TIMEOUT_MS: String(INIT_TIMEOUT_MS), WS_KEEPALIVE_MS: String(KEEPALIVE_MS) },
  });
  url = supergraph.url;
  admin = await token('ADMIN', 'user-0000');
});
afterAll(() => supergraph?.stop());

const active = async () => ({
  gateway: await readCounter(url.replace('/graphql', '/metrics'), 'graphql_active_subscriptions'),
  orders: await readCounter(supergraph!.subgraphUrl('orders').replace('/graphql', '/metrics'), 'graphql_active_subscriptions'),
});
/** `count` streams at the gateway, `upstream` of them at orders (identical subscriptions share one). */
const activeAre = (count: number, upstream = count) =>
  waitFor(async () => JSON.stringify(await active()) === JSON.stringify({ gateway: count, orders: upstream }), `${count} active subscriptions, ${upstream} upstream`);
afterEach(async () => {
  if (supergraph) await activeAre(0);
});

const NEW_ORDER = `subscription { newOrderCreated { id user { name } } }`;
async function createOrder() {
  const { body } = await graphql(url, `mutation ($p: ID!) { createOrder(input: { items: [{ productId: $p, quantity: 1 }] }) { id } }`, {
    variables: { p: toGlobalId('Product', 'product-0001') },
    token: admin,
  });
  expect(body.errors).toBeUndefined();
  return body.data!.createOrder.id as string;
}

/** A bare WebSocket, to speak a protocol by hand: what it received, and how it closed. */
async function rawSocket(protocols: string[], options: { autoPong?: boolean } = {}) {
  const socket = new WebSocket(toWsUrl(url), protocols, options);
  const messages: Record<string, any>[] = [];
  socket.on('message', (data) => messages.push(JSON.parse(String(data))));
  const closed = new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)));
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
  return {
    socket,
    messages,
    closed,
    send: (message: Record<string, unknown>) => socket.send(JSON.stringify(message)),
    received: (type: string) => waitFor(() => messages.some((message) => message.type === type), `a ${type} message`),
  };
}

describe('the legacy graphql-ws subprotocol (subscriptions-transport-ws)', () => {
  it('is accepted at /graphql: connection_init, start, data, stop, connection_terminate', async () => {
    const legacy = await rawSocket(['graphql-ws']);
    expect(legacy.socket.protocol).toBe('graphql-ws');
    legacy.send({ type: 'connection_init', payload: { Authorization: `Bearer ${admin}` } });
    await legacy.received('connection_ack');
    legacy.send({ id: '1', type: 'start', payload: { query: NEW_ORDER } });
    await activeAre(1);

    const id = await createOrder();
    await legacy.received('data');
    expect(legacy.messages.find((message) => message.type === 'data')).toEqual({
      id: '1',
      type: 'data',
      payload: { data: { newOrderCreated: { id, user: { name: 'Ada Admin' } } } },
    });
    legacy.send({ id: '1', type: 'stop' });
    await activeAre(0);
    legacy.send({ type: 'connection_terminate' });
    expect(await legacy.closed).toBe(1000);
  });

  it('closes with 4403 on a token that does not verify', async () => {
    const legacy = await rawSocket(['graphql-ws']);
    legacy.send({ type: 'connection_init', payload: { Authorization: 'Bearer not.a.jwt' } });
    expect(await legacy.closed).toBe(4403);
  });

  it('gives way to graphql-transport-ws when a client offers both', async () => {
    const both = await rawSocket(['graphql-ws', 'graphql-transport-ws']);
    expect(both.socket.protocol).toBe('graphql-transport-ws');
    both.socket.close();
  });
});

describe('bounds on a connection', () => {
  it('allows 20 subscriptions on one connection: the 21st is refused (RATE_LIMITED), the others carry on', async () => {
    const client = wsClient(url, { token: admin });
    const streams: Stream<SubscriptionResult>[] = Array.from({ length: 20 }, () => subscribe(client, NEW_ORDER));
    await activeAre(20, 1); // one stream shared by the twenty
    const refused = subscribe(client, NEW_ORDER);
    expect(await refused.ended).toEqual([expect.objectContaining({ extensions: { code: 'RATE_LIMITED', limit: 20 } })]);

    await streams.pop()!.close();
    const another = subscribe(client, NEW_ORDER);
    await activeAre(20, 1);
    const id = await createOrder();
    for (const stream of [...streams, another]) expect((await stream.received(1))[0]!.data?.['newOrderCreated'].id).toBe(id);
    await Promise.all([...streams, another].map((stream) => stream.close()));
  });

  it('admits the first 20 of a burst of subscribes sent at once, and refuses the rest', async () => {
    const burst = await rawSocket(['graphql-transport-ws']);
    burst.send({ type: 'connection_init', payload: { Authorization: `Bearer ${admin}` } });
    await burst.received('connection_ack');
    try {
      for (let id = 1; id <= 200; id++) burst.send({ id: String(id), type: 'subscribe', payload: { query: NEW_ORDER } });
      await activeAre(20, 1);
      await waitFor(() => burst.messages.filter((message) => message.type === 'error').length === 180, '180 refusals');
      const refusals = burst.messages.filter((message) => message.type === 'error');
      expect(Math.min(...refusals.map((message) => Number(message.id)))).toBe(21);
      expect(refusals[0]!.payload[0].extensions).toMatchObject({ code: 'RATE_LIMITED', limit: 20 });
    } finally {
      burst.socket.close();
    }
  });

  it('closes a connection that never sends connection_init (4408)', async () => {
    const silent = await rawSocket(['graphql-transport-ws']);
    expect(await silent.closed).toBe(4408);
  });

  it('drops a peer that stops answering pings, and releases its subscriptions', async () => {
    const deaf = await rawSocket(['graphql-transport-ws'], { autoPong: false });
    deaf.send({ type: 'connection_init', payload: { Authorization: `Bearer ${admin}` } });
    await deaf.received('connection_ack');
    deaf.send({ id: '1', type: 'subscribe', payload: { query: NEW_ORDER } });
    await activeAre(1);
    expect(await deaf.closed).toBe(1006); // terminated: no close frame
    // afterEach: released on the gateway and in the orders subgraph.
  });
});

describe('graceful shutdown', () => {
  it('closes WebSockets with 1001 and cuts SSE streams, whose clients then retry', async () => {
    let closeCode: number | undefined;
    const current = subscribe(wsClient(url, { token: admin, onClosed: (event) => (closeCode = event.code) }), NEW_ORDER);
    const legacy = await rawSocket(['graphql-ws']);
    legacy.send({ type: 'connection_init', payload: { Authorization: `Bearer ${admin}` } });
    await legacy.received('connection_ack');
    legacy.send({ id: '1', type: 'start', payload: { query: NEW_ORDER } });
    const sse = subscribe(sseClient(url, { token: admin }), NEW_ORDER);
    await activeAre(3, 1);

    await supergraph!.stop();
    supergraph = undefined;
    expect(closeCode).toBe(1001);
    expect(await legacy.closed).toBe(1001);
    await current.ended;
    // Ended without `complete`: a network error, which graphql-sse retries (this client allows no retries).
    expect(String(await sse.ended)).toMatch(/NetworkError/);
  });
});
