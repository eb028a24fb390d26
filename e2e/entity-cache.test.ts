// The entity cache (ENTITY_CACHE=on) on two gateway replicas sharing one Redis, beside a gateway without it in front
// of the same subgraphs: the same answers whatever is cached, hits that ask no subgraph, a fetch narrowed to what the
// cache lacks, no user reading another's data, every write read back through the other replica (over HTTP and over a
// WebSocket opened before it), and correct answers while Redis is away.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger, toGlobalId } from '@ordergraph/core';
import { createGateway, type Gateway } from '@ordergraph/gateway';
import { loadGatewayConfig } from '@ordergraph/gateway/config';
import { graphql, readCounter, subscribe, token, wsClient } from '@ordergraph/testkit';
import { TEST_SIGNING_SECRET, startSupergraph, type Supergraph } from '@ordergraph/testkit/e2e';

// Users and orders carry no hints: these make their fetches cacheable (kept per caller, neither subgraph being listed
// as answering every caller alike); the catalog's Product entities get a TTL too, its `price` having no hint.
const TTLS = 'users.Query=60,users.User=60,orders.Query=60,orders.User=60,orders.Order=60,catalog.Query=60,catalog.Product=60';

let supergraph: Supergraph;
let plain: Gateway;
let plainUrl: string;
let admin: string;
let alice: string;
let bob: string;
const ALICE = toGlobalId('User', 'user-0001');
const product = (n: number) => toGlobalId('Product', `product-${String(n).padStart(4, '0')}`);

beforeAll(async () => {
  // Signed subgraph calls, as in production: a fetch the cache narrows must be signed again.
  const signing = { SUBGRAPH_SIGNING_SECRET: TEST_SIGNING_SECRET };
  supergraph = await startSupergraph({ env: signing, redis: true, gateways: 2, gatewayEnv: { ENTITY_CACHE: 'on', ENTITY_CACHE_TTLS: TTLS } });
  plain = createGateway({ config: loadGatewayConfig({ LOG_LEVEL: 'silent', ...signing }), supergraph: supergraph.sdl, logger: createLogger('gateway', 'silent') });
  plainUrl = await plain.listen(0, '127.0.0.1');
  [admin, alice, bob] = await Promise.all([token('ADMIN', 'user-0000'), token('USER', 'user-0001'), token('USER', 'user-0002')]);
});
afterAll(async () => {
  await plain?.stop();
  await supergraph?.stop();
});

const lookups = (url: string, labels: Record<string, string>) => readCounter(url.replace(/\/graphql$/, '/metrics'), 'gateway_entity_cache_lookups_total', labels);

async function ask(url: string, query: string, variables: Record<string, unknown>, as: string | undefined, headers: Record<string, string> = {}) {
  const { body } = await graphql(url, query, { variables, ...(as ? { token: as } : {}), headers });
  return body;
}

async function placeOrder(as: string, products: number[]): Promise<string> {
  const body = await ask(supergraph.gatewayUrls[1]!, 'mutation ($items: [LineItemInput!]!) { createOrder(input: { items: $items }) { id } }', { items: products.map((n) => ({ productId: product(n), quantity: 1 })) }, as);
  expect(body.errors).toBeUndefined();
  return body.data!['createOrder'].id as string;
}

const ORDERS = 'query ($id: ID!) { user(id: $id) { name email orders(limit: 50) { id status total user { name } items { quantity unitPrice product { name price } } } } }';
const ORDER = 'query ($id: ID!) { order(id: $id) { id status total user { name email } items { quantity product { id name price currentPrice } } } }';
const PRODUCT = 'query ($id: ID!) { product(id: $id) { id name price currentPrice description } }';
const PRODUCTS = 'query ($offset: Int!) { products(limit: 5, offset: $offset) { id name price } }';
const ADMIN_LIST = '{ users(limit: 4) { id email orders(limit: 2) { id items { product { name currentPrice } } } } }';
const NODE = 'query ($id: ID!) { node(id: $id) { id ... on Product { name price } ... on User { email } } }';

describe('the entity cache', () => {
  it('never changes an answer: varied queries and callers, cold and warm, equal those of a gateway without it', async () => {
    const aliceOrder = await placeOrder(alice, [1, 2]);
    const viewers = { admin, alice, bob, anonymous: undefined };
    const cases: [string, Record<string, unknown>][] = [
      [ORDERS, { id: ALICE }],
      [ORDER, { id: aliceOrder }],
      [PRODUCT, { id: product(3) }],
      [PRODUCTS, { offset: 2 }],
      [ADMIN_LIST, {}],
      [NODE, { id: product(4) }],
      [NODE, { id: ALICE }],
    ];
    const hitsBefore = await lookups(supergraph.url, { result: 'hit' });
    for (const [query, variables] of cases) {
      for (const [who, as] of Object.entries(viewers)) {
        const expected = await ask(plainUrl, query, variables, as);
        for (const url of [supergraph.url, supergraph.url, supergraph.gatewayUrls[1]!]) {
          expect({ who, query, body: await ask(url, query, variables, as) }).toEqual({ who, query, body: expected });
        }
      }
    }
    expect(await lookups(supergraph.url, { result: 'hit' })).toBeGreaterThan(hitsBefore);
  });

  it('answers a fetch it holds whole without asking any subgraph', async () => {
    const order = await placeOrder(alice, [5, 6]);
    const first = await ask(supergraph.url, ORDER, { id: order }, alice);
    const requests = await supergraph.subgraphRequests();
    expect(await ask(supergraph.url, ORDER, { id: order }, alice)).toEqual(first);
    expect(await supergraph.subgraphRequests()).toBe(requests);
  });

  it('asks a subgraph only for the representations it lacks, and puts the answers back in order', async () => {
    const [held, partly] = [await placeOrder(alice, [7, 8]), await placeOrder(alice, [9, 8, 10])];
    const query = 'query ($id: ID!) { order(id: $id) { items { product { id name price } } } }';
    await ask(supergraph.url, query, { id: held }, alice);
    const product = { subgraph: 'catalog', type: 'Product' };
    const [hits, misses] = [await lookups(supergraph.url, { ...product, result: 'hit' }), await lookups(supergraph.url, { ...product, result: 'miss' })];
    expect(await ask(supergraph.url, query, { id: partly }, alice)).toEqual(await ask(plainUrl, query, { id: partly }, alice));
    expect(await lookups(supergraph.url, { ...product, result: 'hit' })).toBe(hits + 1);
    expect(await lookups(supergraph.url, { ...product, result: 'miss' })).toBe(misses + 2);
  });

  it("never shows one user's private data to another", async () => {
    const order = await placeOrder(alice, [11]);
    const email = (await ask(plainUrl, '{ user(id: "' + ALICE + '") { email } }', {}, alice)).data!['user'].email as string;
    for (const [query, variables] of [
      [ORDERS, { id: ALICE }],
      [ORDER, { id: order }],
      [NODE, { id: ALICE }],
    ] as const) {
      // Alice's answers cached on both replicas first, then asked by Bob and an anonymous caller.
      for (const url of supergraph.gatewayUrls) expect(JSON.stringify(await ask(url, query, variables, alice))).toContain(email);
      for (const url of supergraph.gatewayUrls) {
        for (const as of [bob, undefined]) {
          const body = await ask(url, query, variables, as);
          expect(JSON.stringify(body)).not.toContain(email);
          expect(body).toEqual(await ask(plainUrl, query, variables, as));
        }
      }
    }
    // An entry's key joins the fetch, its variables and its reader with NUL characters: a variable that holds one, and
    // then Alice's part of a key, is still Bob's own (its JSON escapes the NUL).
    const forged = { id: `${ALICE}\u0000"user:user-0001:USER"` };
    for (const url of supergraph.gatewayUrls) {
      const body = await ask(url, NODE, forged, bob);
      expect(JSON.stringify(body)).not.toContain(email);
      expect(body).toEqual(await ask(plainUrl, NODE, forged, bob));
    }
  });

  it('reads every write back through the other replica', async () => {
    const [one, two] = supergraph.gatewayUrls as [string, string];
    const order = await placeOrder(alice, [12]);
    const names = 'query ($order: ID!, $product: ID!) { order(id: $order) { status items { product { name } } } product(id: $product) { name } }';
    const variables = { order, product: product(12) };
    for (let i = 0; i < 2; i++) await ask(one, names, variables, alice);
    // Its ID not selected: the whole type goes.
    const renamed = await ask(two, 'mutation ($id: ID!) { updateProduct(id: $id, input: { name: "Renamed twelve" }) { name } }', { id: product(12) }, admin);
    expect(renamed.errors).toBeUndefined();
    const read = await ask(one, names, variables, alice);
    expect(read.data!['order'].items[0].product.name).toBe('Renamed twelve');
    expect(read.data!['product'].name).toBe('Renamed twelve');

    // The user's order list (User.orders in orders) and an order's status.
    const list = `{ user(id: "${ALICE}") { orders(limit: 100) { id status } } }`;
    for (let i = 0; i < 2; i++) await ask(one, list, {}, alice);
    const placed = await placeOrder(alice, [13]);
    expect((await ask(one, list, {}, alice)).data!['user'].orders.map((o: { id: string }) => o.id)).toContain(placed);
    const cancelled = await ask(two, 'mutation ($id: ID!) { cancelOrder(id: $id) { status } }', { id: order }, alice);
    expect(cancelled.errors).toBeUndefined();
    expect((await ask(one, names, variables, alice)).data!['order'].status).toBe('CANCELLED');
    expect((await ask(one, list, {}, alice)).data!['user'].orders.find((o: { id: string }) => o.id === order).status).toBe('CANCELLED');
  });

  it('reads a write back through a WebSocket opened before it: each operation reads the changes anew', async () => {
    const [one, two] = supergraph.gatewayUrls as [string, string];
    const query = 'query ($id: ID!) { product(id: $id) { name } }';
    const client = wsClient(one, { token: alice });
    try {
      const name = async () => (await subscribe(client, query, { id: product(16) }).received(1))[0]!.data!['product'].name as string;
      expect(await name()).not.toBe('Renamed over HTTP');
      const hits = await lookups(one, { subgraph: 'catalog', type: 'Query', result: 'hit' });
      expect(await name()).not.toBe('Renamed over HTTP');
      // Answered from the cache over the WebSocket, as over HTTP.
      expect(await lookups(one, { subgraph: 'catalog', type: 'Query', result: 'hit' })).toBe(hits + 1);
      const renamed = await ask(two, 'mutation ($id: ID!) { updateProduct(id: $id, input: { name: "Renamed over HTTP" }) { id name } }', { id: product(16) }, admin);
      expect(renamed.errors).toBeUndefined();
      expect(await name()).toBe('Renamed over HTTP');
    } finally {
      await client.dispose();
    }
  });

  it("drops what a write's subgraph declares it changed, and keeps every other caller's and order's entries", async () => {
    const [one, two] = supergraph.gatewayUrls as [string, string];
    const BOB = toGlobalId('User', 'user-0002');
    const seeded = (await ask(one, ORDERS, { id: BOB }, bob)).data!['user'].orders as { id: string }[];
    const bobsOrder = seeded[0]!.id;
    // Bob's order list, one of his orders and Alice's list, held on replica one.
    for (let i = 0; i < 2; i++) {
      await ask(one, ORDERS, { id: BOB }, bob);
      await ask(one, ORDER, { id: bobsOrder }, bob);
      await ask(one, ORDERS, { id: ALICE }, alice);
    }
    const declared = () => readCounter(two.replace(/\/graphql$/, '/metrics'), 'gateway_entity_cache_invalidations_total', { cause: 'declared', result: 'ok' });
    const before = await declared();
    const placed = await placeOrder(alice, [14]);
    expect(await declared()).toBe(before + 1);

    // Orders told the gateway: this order and Alice. Bob's list and order are still served whole by replica one...
    const requests = await supergraph.subgraphRequests();
    await ask(one, ORDERS, { id: BOB }, bob);
    await ask(one, ORDER, { id: bobsOrder }, bob);
    expect(await supergraph.subgraphRequests()).toBe(requests);
    // ...and Alice's list holds the new order at once.
    expect((await ask(one, ORDERS, { id: ALICE }, alice)).data!['user'].orders.map((o: { id: string }) => o.id)).toContain(placed);
    expect(await ask(one, ORDERS, { id: ALICE }, alice)).toEqual(await ask(plainUrl, ORDERS, { id: ALICE }, alice));
  });

  it("asks the subgraphs for a mutation's whole answer: the write may have changed what it nests", async () => {
    const users = { subgraph: 'users', type: 'User' };
    const looked = async () => (await lookups(supergraph.url, { ...users, result: 'hit' })) + (await lookups(supergraph.url, { ...users, result: 'miss' }));
    await ask(supergraph.url, `{ user(id: "${ALICE}") { orders(limit: 1) { user { name email } } } }`, {}, alice);
    const before = await looked();
    const body = await ask(supergraph.url, 'mutation ($items: [LineItemInput!]!) { createOrder(input: { items: $items }) { id user { name email } } }', { items: [{ productId: product(15), quantity: 1 }] }, alice);
    expect(body.errors).toBeUndefined();
    expect(body.data!['createOrder'].user.email).toMatch(/@/);
    expect(await looked()).toBe(before);
  });

  it("holds an order line's product as a reference: dropping every product leaves the orders cached", async () => {
    const BOB = toGlobalId('User', 'user-0002');
    for (let i = 0; i < 2; i++) await ask(supergraph.url, ORDERS, { id: BOB }, bob);
    const orders = { subgraph: 'orders', type: 'User' };
    const [hits, misses] = [await lookups(supergraph.url, { ...orders, result: 'hit' }), await lookups(supergraph.url, { ...orders, result: 'miss' })];
    const purged = await fetch(supergraph.url.replace(/\/graphql$/, '/entity-cache/purge'), {
      method: 'POST',
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'Product' }),
    });
    expect(purged.status).toBe(200);
    expect(await ask(supergraph.url, ORDERS, { id: BOB }, bob)).toEqual(await ask(plainUrl, ORDERS, { id: BOB }, bob));
    expect(await lookups(supergraph.url, { ...orders, result: 'hit' })).toBe(hits + 1);
    expect(await lookups(supergraph.url, { ...orders, result: 'miss' })).toBe(misses);
  });

  it('is purged and bypassed by administrators only', async () => {
    // The path of earlier versions still answers as /cache/invalidate does.
    let path = '/entity-cache/purge';
    const purge = (as: string | undefined, body: unknown) =>
      fetch(supergraph.url.replace(/\/graphql$/, path), {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(as ? { authorization: `Bearer ${as}` } : {}) },
        body: JSON.stringify(body),
      });
    expect((await purge(undefined, {})).status).toBe(401);
    expect((await purge(alice, {})).status).toBe(403);
    expect((await purge(admin, { id: 'x' })).status).toBe(400);

    const query = 'query ($id: ID!) { product(id: $id) { name } }';
    await ask(supergraph.url, query, { id: product(14) }, alice);
    const root = { subgraph: 'catalog', type: 'Query' };
    const hits = await lookups(supergraph.url, { ...root, result: 'hit' });
    await ask(supergraph.url, query, { id: product(14) }, alice);
    expect(await lookups(supergraph.url, { ...root, result: 'hit' })).toBe(hits + 1);
    // The product by its ID (kept as that entity's entry) and a list of products (kept by the type it holds).
    await ask(supergraph.url, PRODUCTS, { offset: 10 }, alice);
    for (const body of [{ type: 'Product', id: product(14) }, { type: 'Product' }, {}]) {
      expect((await purge(admin, body)).status).toBe(200);
      path = '/cache/invalidate';
      const misses = await lookups(supergraph.url, { ...root, result: 'miss' });
      await ask(supergraph.url, query, { id: product(14) }, alice);
      await ask(supergraph.url, PRODUCTS, { offset: 10 }, alice);
      expect(await lookups(supergraph.url, { ...root, result: 'miss' })).toBe(misses + 2);
      await ask(supergraph.url, query, { id: product(14) }, alice);
      await ask(supergraph.url, PRODUCTS, { offset: 10 }, alice);
      expect(await lookups(supergraph.url, { ...root, result: 'miss' })).toBe(misses + 2);
    }

    const bypassed = await lookups(supergraph.url, { result: 'bypass' });
    await ask(supergraph.url, query, { id: product(14) }, alice, { 'x-entity-cache': 'bypass' });
    expect(await lookups(supergraph.url, { result: 'bypass' })).toBe(bypassed);
    await ask(supergraph.url, query, { id: product(14) }, admin, { 'x-entity-cache': 'bypass' });
    expect(await lookups(supergraph.url, { result: 'bypass' })).toBe(bypassed + 1);
  });

  it('keeps no key in Redis without a TTL', async () => {
    await ask(supergraph.url, ORDERS, { id: ALICE }, alice);
    const client = supergraph.redis!.client;
    const keys = await client.keys('ordergraph:entity:*');
    expect(keys.some((key) => key.includes(':data:'))).toBe(true);
    expect(keys.some((key) => key.includes(':gen:'))).toBe(true);
    const ttls = await Promise.all(keys.map((key) => client.pttl(key)));
    expect(ttls.filter((ttl) => ttl <= 0)).toEqual([]);
  });

  // Last: it stops Redis.
  it('answers from the subgraphs while Redis is away, and serves nothing stale once it is back', async () => {
    const [one, two] = supergraph.gatewayUrls as [string, string];
    const query = 'query ($id: ID!) { product(id: $id) { name } }';
    const rename = (name: string) => ask(two, 'mutation ($id: ID!, $name: String!) { updateProduct(id: $id, input: { name: $name }) { id name } }', { id: product(15), name }, admin);
    for (let i = 0; i < 2; i++) await ask(one, query, { id: product(15) }, alice);
    const redis = supergraph.redis!;
    await redis.stop();
    try {
      expect((await rename('Renamed while away')).errors).toBeUndefined();
      expect((await ask(one, query, { id: product(15) }, alice)).data!['product'].name).toBe('Renamed while away');
    } finally {
      await redis.start();
    }
    for (let i = 0; i < 3; i++) expect((await ask(one, query, { id: product(15) }, alice)).data!['product'].name).toBe('Renamed while away');
  });
});

describe('the entity cache with every subgraph listed as answering all callers alike', () => {
  let shared: Supergraph;
  beforeAll(async () => {
    shared = await startSupergraph({ gatewayEnv: { ENTITY_CACHE: 'on', ENTITY_CACHE_TTLS: TTLS, ENTITY_CACHE_SHARED_SUBGRAPHS: 'users,orders,catalog' } });
  });
  afterAll(() => shared?.stop());

  it("still keeps users' and orders' answers per caller: their types are PRIVATE", async () => {
    const email = (await ask(shared.url, `{ user(id: "${ALICE}") { email } }`, {}, alice)).data!['user'].email as string;
    const order = (await ask(shared.url, 'mutation ($p: ID!) { createOrder(input: { items: [{ productId: $p, quantity: 1 }] }) { id } }', { p: product(17) }, alice)).data!['createOrder'].id as string;
    for (const [query, variables] of [
      [ORDERS, { id: ALICE }],
      [ORDER, { id: order }],
      [NODE, { id: ALICE }],
    ] as const) {
      for (let i = 0; i < 2; i++) expect(JSON.stringify(await ask(shared.url, query, variables, alice))).toContain(email);
      for (const as of [bob, undefined]) expect(JSON.stringify(await ask(shared.url, query, variables, as))).not.toContain(email);
    }
    expect(await lookups(shared.url, { result: 'hit' })).toBeGreaterThan(0);
  });
});
