// The fields a subscription event needs from users and catalog: fetched once per event for all the streams of one
// caller (batched across streams of different selections), never merged across callers, and a users or catalog subgraph
// that is slow or down costs the event only those fields. The gateway reaches users and catalog through a proxy each
// here, which counts its `_entities` calls, notes whose credential each carries, and can hold or refuse them.
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toGlobalId } from '@ordergraph/core';
import { freePort, graphql, readCounter, sseClient, startRedis, subscribe, token, waitFor, wsClient, type Stream, type SubscriptionResult, type TestRedis } from '@ordergraph/testkit';
import { TEST_SIGNING_SECRET, startSupergraph, type Supergraph } from '@ordergraph/testkit/e2e';

/** Users' and catalog's timeout at the gateway. */
const TIMEOUT_MS = 500;
/** Wide enough that every stream's fetch for one event falls in one window on a busy machine. */
const BATCH_WINDOW_MS = 150;

/** What a proxy in front of a subgraph does with an `_entities` call: pass it on, hold it past the timeout, or refuse it. */
type Mode = 'pass' | 'hold' | 'down';

interface EntityCall {
  authorization: string | undefined;
  /** The `_entities` fields the call asks (one per distinct fetch merged into it). */
  fetches: number;
  representations: unknown[];
}

interface Proxy {
  server: http.Server;
  url: string;
  mode: Mode;
  entityCalls: EntityCall[];
}

let redis: TestRedis;
let supergraph: Supergraph;
let users: Proxy;
let catalog: Proxy;
let admin: string;
let alice: string;

/** A proxy in front of a subgraph (its URL known once the supergraph has started). */
async function startProxy(target: () => string): Promise<Proxy> {
  const port = await freePort();
  const entityCalls: EntityCall[] = [];
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString();
    if (body.includes('_entities')) {
      const { query, variables } = JSON.parse(body) as { query: string; variables: Record<string, unknown[]> };
      entityCalls.push({ authorization: req.headers.authorization, fetches: query.match(/_entities\(/g)?.length ?? 0, representations: Object.values(variables).flat() });
      if (proxy.mode === 'down') return void res.writeHead(503, { 'content-type': 'text/plain' }).end('no subgraph here');
      if (proxy.mode === 'hold') await new Promise((resolve) => setTimeout(resolve, TIMEOUT_MS * 3));
    }
    const headers = Object.fromEntries(Object.entries(req.headers).filter(([name]) => !['host', 'content-length', 'connection'].includes(name))) as Record<string, string>;
    const answer = await fetch(target(), { method: req.method!, headers, ...(req.method === 'POST' ? { body } : {}) }).catch(() => undefined);
    if (!answer || res.destroyed) return void res.destroy();
    res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' }).end(await answer.text());
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const proxy: Proxy = { server, url: `http://127.0.0.1:${port}/graphql`, mode: 'pass', entityCalls };
  return proxy;
}

beforeAll(async () => {
  redis = await startRedis();
  [users, catalog] = await Promise.all([startProxy(() => supergraph.subgraphUrl('users')), startProxy(() => supergraph.subgraphUrl('catalog'))]);
  supergraph = await startSupergraph({
    // Signed, as in production: users serves a merged call only if the gateway signed it as sent.
    env: { REDIS_URL: redis.url, SUBGRAPH_SIGNING_SECRET: TEST_SIGNING_SECRET },
    gatewayEnv: {
      SUBGRAPH_USERS_URL: users.url,
      SUBGRAPH_CATALOG_URL: catalog.url,
      SUBGRAPH_TIMEOUTS: `users=${TIMEOUT_MS},catalog=${TIMEOUT_MS}`,
      ENTITY_BATCH_WINDOW_MS: String(BATCH_WINDOW_MS),
      CIRCUIT_BREAKER_FAILURES: '2',
      CIRCUIT_BREAKER_RESET_MS: '1000',
    },
  });
  [admin, alice] = await Promise.all([token('ADMIN', 'user-0000'), token('USER', 'user-0001')]);
});
afterAll(async () => {
  await supergraph?.stop();
  await Promise.all([users, catalog].map((proxy) => new Promise((resolve) => proxy?.server.close(resolve))));
  await redis?.close();
});

const metrics = (url: string) => url.replace(/\/graphql$/, '/metrics');
/** Waits until the gateway serves `subscribers` subscriptions, on `streams` upstream subscriptions on orders. */
async function established(subscribers: number, streams = subscribers) {
  await waitFor(async () => {
    const [gateway, orders] = await Promise.all([
      readCounter(metrics(supergraph.url), 'graphql_active_subscriptions'),
      readCounter(metrics(supergraph.subgraphUrl('orders')), 'graphql_active_subscriptions'),
    ]);
    return gateway === subscribers && orders === streams;
  }, `${subscribers} subscriptions on ${streams} streams`);
}
const idle = () => established(0);

async function createOrder(as: string, products = ['product-0001']) {
  const { body } = await graphql(supergraph.url, `mutation ($items: [LineItemInput!]!) { createOrder(input: { items: $items }) { id } }`, {
    variables: { items: products.map((id) => ({ productId: toGlobalId('Product', id), quantity: 2 })) },
    token: as,
  });
  expect(body.errors).toBeUndefined();
  return (body.data!['createOrder'] as { id: string }).id;
}

const closeAll = (streams: Stream<SubscriptionResult>[]) => Promise.all(streams.map((stream) => stream.close()));

describe('entity fetches of one event', () => {
  it("are one users request per caller for all of the caller's streams, whatever their selections; callers are never merged", async () => {
    const adminSelections = ['id user { name }', 'id status user { email }', 'id user { name role }', 'id total user { createdAt } items { quantity product { name } }'];
    const aliceSelections = ['id user { name }', 'id updatedAt user { email }', 'id user { name email }'];
    const ws = wsClient(supergraph.url, { token: admin });
    const sse = sseClient(supergraph.url, { token: alice });
    const streams = [
      ...adminSelections.map((selection) => subscribe(ws, `subscription { newOrderCreated { ${selection} } }`)),
      ...aliceSelections.map((selection) => subscribe(sse, `subscription { newOrderCreated { ${selection} } }`)),
    ];
    try {
      await established(streams.length);
      users.entityCalls.length = 0;
      const orderId = await createOrder(alice);
      const events = await Promise.all(streams.map(async (stream) => (await stream.received(1))[0]!));

      for (const event of events) {
        expect(event.errors).toBeUndefined();
        expect(event.data?.['newOrderCreated']).toMatchObject({ id: orderId, user: expect.any(Object) });
      }
      expect(events[0]!.data!['newOrderCreated'].user).toEqual({ name: expect.any(String) });
      expect(events[2]!.data!['newOrderCreated'].user).toEqual({ name: expect.any(String), role: 'USER' });
      expect(events[3]!.data!['newOrderCreated'].items).toEqual([{ quantity: 2, product: { name: expect.any(String) } }]);
      expect(events[6]!.data!['newOrderCreated'].user).toEqual({ name: expect.any(String), email: expect.any(String) });

      // Seven streams, two callers: two requests, one per credential, each carrying every distinct fetch of its
      // caller's streams (the admin's four selections ask four field sets; alice's three ask three).
      expect(users.entityCalls).toHaveLength(2);
      const byCaller = new Map(users.entityCalls.map((call) => [call.authorization, call]));
      expect([...byCaller.keys()].sort()).toEqual([`Bearer ${admin}`, `Bearer ${alice}`].sort());
      expect(byCaller.get(`Bearer ${admin}`)!.fetches).toBe(4);
      expect(byCaller.get(`Bearer ${alice}`)!.fetches).toBe(3);
      for (const call of users.entityCalls) {
        for (const representation of call.representations) expect(representation).toEqual({ __typename: 'User', id: toGlobalId('User', 'user-0001') });
      }
    } finally {
      await closeAll(streams);
      await ws.dispose();
      await sse.dispose();
    }
    await idle();
  });
});

/** The cross-subgraph selection of docs/realtime.md's example, with createdAt. */
const CROSS = `subscription { newOrderCreated { id status total createdAt user { name } items { quantity product { name } } } }`;

/** The event of `orderId` with the users fields missing: everything else is there. */
const partial = (orderId: string) => ({
  data: {
    newOrderCreated: {
      id: orderId,
      status: 'PENDING',
      total: expect.any(Number),
      createdAt: expect.any(String),
      user: { name: null },
      items: [{ quantity: 2, product: { name: expect.any(String) } }],
    },
  },
  errors: [expect.objectContaining({ path: ['newOrderCreated', 'user'], extensions: expect.objectContaining({ code: expect.any(String) }) })],
});

describe('a users subgraph that fails an event', () => {
  it('slow: the event arrives within the timeout with its own fields, user { name } null and SUBGRAPH_TIMEOUT, never data: null; so does every stream of the merged call', async () => {
    const client = wsClient(supergraph.url, { token: admin });
    const stream = subscribe(client, CROSS);
    // Another selection of users' fields (an alias is a fetch of its own): its fetch leaves merged with the first.
    const other = subscribe(client, `subscription { newOrderCreated { id nick: user { alias: name } } }`);
    users.mode = 'hold';
    try {
      await established(2);
      users.entityCalls.length = 0;
      const orderId = await createOrder(alice);
      const [event] = await stream.received(1);
      expect(event).toEqual(partial(orderId));
      expect(event!.errors![0]!.extensions).toEqual({ code: 'SUBGRAPH_TIMEOUT' });
      const [otherEvent] = await other.received(1);
      expect(otherEvent).toEqual({
        data: { newOrderCreated: { id: orderId, nick: { alias: null } } },
        errors: [expect.objectContaining({ path: ['newOrderCreated', 'nick'], extensions: { code: 'SUBGRAPH_TIMEOUT' } })],
      });
      expect(users.entityCalls.map((call) => call.fetches)).toEqual([2]);
    } finally {
      users.mode = 'pass';
      await Promise.all([stream.close(), other.close()]);
      await client.dispose();
    }
    await idle();
  });

  it('down, then its circuit open (failing fast, users not called): every event keeps its own fields with its own error; back up, events are whole again', async () => {
    const client = sseClient(supergraph.url, { token: admin });
    const stream = subscribe(client, CROSS);
    const circuit = async () => ((await (await fetch(supergraph.url.replace('/graphql', '/readyz'))).json()) as { subgraphs: Record<string, string> }).subgraphs['users'];
    const orders: string[] = [];
    const event = async () => {
      orders.push(await createOrder(alice));
      return (await stream.received(orders.length)).at(-1)!;
    };
    users.mode = 'down';
    try {
      await established(1);
      // Each failed event counts against the circuit, which opens after CIRCUIT_BREAKER_FAILURES of them.
      while ((await circuit()) !== 'open' && orders.length < 3) {
        const failed = await event();
        expect(failed).toEqual(partial(orders.at(-1)!));
        // Refused, not timed out: users' 503 fails the call as soon as its retry is refused too.
        expect(failed.errors).toEqual([expect.objectContaining({ path: ['newOrderCreated', 'user'], extensions: { code: 'SUBGRAPH_UNAVAILABLE' } })]);
      }
      expect(await circuit()).toBe('open');
      users.entityCalls.length = 0;
      const failedFast = await event();
      expect(users.entityCalls).toHaveLength(0);
      expect(failedFast).toEqual(partial(orders.at(-1)!));
      // Without internals: neither the subgraph's name nor its circuit's state.
      expect(failedFast.errors).toEqual([expect.objectContaining({ extensions: { code: 'SUBGRAPH_UNAVAILABLE' } })]);

      // Once users answers again (the circuit's probe), the stream's next events are whole, without the old errors.
      users.mode = 'pass';
      await waitFor(async () => (await circuit()) === 'half-open', 'the circuit to let a probe through');
      const whole = await event();
      expect(whole.errors).toBeUndefined();
      expect(whole.data?.['newOrderCreated'].user).toEqual({ name: expect.any(String) });
    } finally {
      users.mode = 'pass';
      await stream.close();
      await client.dispose();
    }
    await idle();
  });
});

/** Two lines: both products come from one catalog call, and both are null when it fails. */
const TWO_PRODUCTS = ['product-0001', 'product-0002'];
const readyz = async () => ((await (await fetch(supergraph.url.replace('/graphql', '/readyz'))).json()) as { subgraphs: Record<string, string> }).subgraphs;

/**
 * The two-line event of `orderId` with the catalog's fields missing: each line's product null, everything else there,
 * and one error for the failed call. Its path is the executor's for the fetch of every line's product: the field's
 * path without list indices.
 */
const withoutProducts = (orderId: string, code: unknown) => ({
  data: {
    newOrderCreated: {
      id: orderId,
      status: 'PENDING',
      total: expect.any(Number),
      createdAt: expect.any(String),
      user: { name: expect.any(String) },
      items: [
        { quantity: 2, product: null },
        { quantity: 2, product: null },
      ],
    },
  },
  errors: [expect.objectContaining({ path: ['newOrderCreated', 'items', 'product'], extensions: { code } })],
});

// LineItem.product is nullable for this: with Product! the null would climb through items and newOrderCreated to data.
describe('a catalog subgraph that fails an event', () => {
  it('slow: the event arrives with its own fields and its users fields, every items[i].product null with SUBGRAPH_TIMEOUT at the products’ path, never data: null', async () => {
    const client = wsClient(supergraph.url, { token: admin });
    const stream = subscribe(client, CROSS);
    catalog.mode = 'hold';
    try {
      await established(1);
      catalog.entityCalls.length = 0;
      const orderId = await createOrder(alice, TWO_PRODUCTS);
      const [event] = await stream.received(1);
      expect(event).toEqual(withoutProducts(orderId, 'SUBGRAPH_TIMEOUT'));
      expect(catalog.entityCalls).toHaveLength(1);
    } finally {
      catalog.mode = 'pass';
      await stream.close();
      await client.dispose();
    }
    await idle();
  });

  it('down: every event keeps its own fields and its users fields, products null with SUBGRAPH_UNAVAILABLE at their path; back up, the next event carries product names and no errors', async () => {
    const client = sseClient(supergraph.url, { token: admin });
    const stream = subscribe(client, CROSS);
    const orders: string[] = [];
    const event = async () => {
      orders.push(await createOrder(alice, TWO_PRODUCTS));
      return (await stream.received(orders.length)).at(-1)!;
    };
    catalog.mode = 'down';
    try {
      await established(1);
      catalog.entityCalls.length = 0;
      // A refusal fails the call as soon as its retry is refused too, long before the timeout. The two failed calls
      // open catalog's circuit (placing an order does not call catalog through the gateway).
      for (let i = 0; i < 2; i++) {
        expect(await event()).toEqual(withoutProducts(orders.at(-1)!, 'SUBGRAPH_UNAVAILABLE'));
      }
      expect(catalog.entityCalls.length).toBeGreaterThanOrEqual(2);
      expect((await readyz())['catalog']).toBe('open');

      catalog.mode = 'pass';
      await waitFor(async () => (await readyz())['catalog'] !== 'open', 'the catalog circuit to let a call through');
      const whole = await event();
      expect(whole.errors).toBeUndefined();
      expect(whole.data?.['newOrderCreated'].items).toEqual([
        { quantity: 2, product: { name: expect.any(String) } },
        { quantity: 2, product: { name: expect.any(String) } },
      ]);
    } finally {
      catalog.mode = 'pass';
      await stream.close();
      await client.dispose();
    }
    await idle();
  });
});
