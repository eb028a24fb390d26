// Cache hints end to end: @cacheControl composed from the catalog into the supergraph, the Cache-Control header the
// gateway computes from the fields selected, and the public response cache in a real Redis shared by two replicas.
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kind, parse, type OperationDefinitionNode } from 'graphql';
import { toGlobalId, type Redis } from '@ordergraph/core';
import { freePort, graphql, readCounter, token } from '@ordergraph/testkit';
import { startSupergraph, type Supergraph } from '@ordergraph/testkit/e2e';

let supergraph: Supergraph;
let inspect: Redis;
let admin: string;
let alice: string;
const INVALIDATION_KEY = 'a-subgraph-team-invalidation-key-0000';
const productId = (n: number) => toGlobalId('Product', `product-${String(n).padStart(4, '0')}`);

/** A subgraph call the gateways made (through the recording proxies), with its query. */
interface SubgraphCall {
  subgraph: string;
  query: string;
}
const SUBGRAPHS = ['users', 'orders', 'catalog'];
const subgraphCalls: SubgraphCall[] = [];
const proxies: http.Server[] = [];
/**
 * Subgraph answers to hold back: a call whose query contains `match` is answered by its subgraph at once, and that
 * answer reaches the gateway only once `release` resolves (a slow network after the read).
 */
const holds: { match: string; held: () => void; release: Promise<void> }[] = [];

/** A proxy in front of a subgraph that notes every call the gateways make to it (its URL known once it has started). */
async function recordingProxy(subgraph: string): Promise<string> {
  const port = await freePort();
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString();
    if (req.method === 'POST') subgraphCalls.push({ subgraph, query: (JSON.parse(body) as { query: string }).query });
    const headers = Object.fromEntries(Object.entries(req.headers).filter(([name]) => !['host', 'content-length', 'connection'].includes(name))) as Record<string, string>;
    const answer = await fetch(supergraph.subgraphUrl(subgraph), { method: req.method!, headers, ...(req.method === 'POST' ? { body } : {}) });
    const hold = holds.find(({ match }) => body.includes(match));
    if (hold) {
      holds.splice(holds.indexOf(hold), 1);
      hold.held();
      await hold.release;
    }
    res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' }).end(await answer.text());
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  proxies.push(server);
  return `http://127.0.0.1:${port}/graphql`;
}

beforeAll(async () => {
  const urls = await Promise.all(SUBGRAPHS.map(recordingProxy));
  const gatewayEnv = Object.fromEntries(SUBGRAPHS.map((name, i) => [`SUBGRAPH_${name.toUpperCase()}_URL`, urls[i]!]));
  supergraph = await startSupergraph({ gateways: 2, redis: true, gatewayEnv: { ...gatewayEnv, CACHE_INVALIDATION_KEY: INVALIDATION_KEY } });
  inspect = supergraph.redis!.client;
  [admin, alice] = await Promise.all([token('ADMIN', 'user-0000'), token('USER', 'user-0001')]);
});
afterAll(async () => {
  await supergraph?.stop();
  await Promise.all(proxies.map((proxy) => new Promise((resolve) => proxy.close(resolve))));
});

/** The fields a subgraph call selects on its operation's root. */
const rootFields = (query: string) =>
  (parse(query).definitions[0] as OperationDefinitionNode).selectionSet.selections.flatMap((selection) =>
    selection.kind === Kind.FIELD ? [selection.alias ? `${selection.alias.value}: ${selection.name.value}` : selection.name.value] : [],
  );

const cacheControl = async (query: string, options: Parameters<typeof graphql>[2] = {}) => {
  const response = await graphql(supergraph.url, query, options);
  return response.headers.get('cache-control');
};

/** Cached responses in Redis (not the entity index sets). */
const cachedResponses = async () => (await inspect.keys('ordergraph:response:*')).filter((key) => !key.includes(':entity:'));

/** The response cache is written after the response is sent; wait (a bounded number of polls) until it is. */
async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  let value = await read();
  for (let attempt = 0; attempt < 100 && !done(value); attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    value = await read();
  }
  return value;
}

describe('Cache-Control', () => {
  it('is the smallest maxAge of the fields selected, public for anonymous callers', async () => {
    const id = productId(20);
    expect(await cacheControl(`{ product(id: "${id}") { id name price } }`)).toBe('public, max-age=300');
    expect(await cacheControl(`{ product(id: "${id}") { id name currentPrice } }`)).toBe('public, max-age=60');
    expect(await cacheControl(`{ product(id: "${id}") { ...Price } } fragment Price on Product { currentPrice }`)).toBe('public, max-age=60');
    const response = await graphql(supergraph.url, `{ product(id: "${id}") { name } }`);
    expect(response.headers.get('vary')).toMatch(/Authorization/);
  });

  it('is no-store for fields without a hint, mutations, errors and traced responses', async () => {
    const id = productId(21);
    expect(await cacheControl('{ products(limit: 1) { id } }')).toBe('no-store');
    expect(await cacheControl(`{ product(id: "${id}") { name } search(query: "lamp") { __typename } }`)).toBe('no-store');
    expect(await cacheControl(`{ product(id: "${id}") { name } user(id: "${toGlobalId('User', 'user-0001')}") { name } }`)).toBe('no-store');
    expect(await cacheControl(`{ product(id: "${toGlobalId('Product', 'none')}") { name } }`)).toBe('no-store');
    expect(await cacheControl(`mutation { cancelOrder(id: "${toGlobalId('Order', 'none')}") { id } }`, { token: alice })).toBe('no-store');
    expect(await cacheControl(`{ product(id: "${id}") { name } }`, { headers: { 'x-ordergraph-tracing': '1' } })).toBe('no-store');
  });

  it('is private for an authenticated caller', async () => {
    expect(await cacheControl(`{ product(id: "${productId(22)}") { name currentPrice } }`, { token: alice })).toBe('private, max-age=60');
  });

  it('comes from hints the catalog declares, which its own Apollo Server reads as well', async () => {
    const response = await graphql(supergraph.subgraphUrl('catalog'), `{ product(id: "${productId(23)}") { name currentPrice } }`);
    expect(response.headers.get('cache-control')).toBe('max-age=60, public');
  });
});

describe('the response cache', () => {
  it('keeps an anonymous response in Redis for its maxAge, and any replica answers from it with its Age', async () => {
    const query = `{ product(id: "${productId(30)}") { id name currentPrice } }`;
    const before = await cachedResponses();
    const first = await graphql(supergraph.url, query);
    const added = (await eventually(cachedResponses, (keys) => keys.length > before.length)).filter((key) => !before.includes(key));
    expect(added).toHaveLength(1);
    const ttl = await inspect.pttl(added[0]!);
    expect(ttl > 0 && ttl <= 60_000).toBe(true);

    const requests = await supergraph.subgraphRequests();
    const second = await graphql(supergraph.gatewayUrls[1]!, query);
    expect(await supergraph.subgraphRequests()).toBe(requests);
    expect(second.body).toEqual(first.body);
    expect(second.headers.get('cache-control')).toBe('public, max-age=60');
    const age = Number(second.headers.get('age'));
    expect(Number.isInteger(age) && age >= 0 && age <= 60).toBe(true);
  });

  it('never keeps an authenticated, uncacheable or traced response', async () => {
    const before = (await cachedResponses()).length;
    const id = productId(31);
    await graphql(supergraph.url, `{ product(id: "${id}") { name } }`, { token: alice });
    await graphql(supergraph.url, `{ products(limit: 1) { id } }`);
    await graphql(supergraph.url, `{ product(id: "${id}") { name } }`, { headers: { 'x-apollo-tracing': '1' } });
    // A cacheable marker: once its entry is in Redis, any write the requests before it made has landed too (one
    // connection, in order).
    await graphql(supergraph.url, `{ product(id: "${id}") { price } }`);
    const after = await eventually(cachedResponses, (keys) => keys.length > before);
    expect(after.length).toBe(before + 1);

    // An authenticated request is never answered from the response cache (the entity cache, bypassed here, may answer it).
    const requests = await supergraph.subgraphRequests();
    await graphql(supergraph.url, `{ product(id: "${id}") { name } }`, { token: admin, headers: { 'x-entity-cache': 'bypass' } });
    expect(await supergraph.subgraphRequests()).toBeGreaterThan(requests);
  });

  it('answers a conditional GET with 304 only while the client’s copy is the response it would get now', async () => {
    const id = productId(33);
    const query = `{ product(id: "${id}") { name } }`;
    const get = async (document: string, headers: Record<string, string> = {}) =>
      fetch(`${supergraph.url}?${new URLSearchParams({ query: document })}`, {
        headers: { accept: 'application/json', 'apollo-require-preflight': 'true', ...headers },
      });
    const before = (await cachedResponses()).length;
    const first = await get(query);
    const [etag, lastModified] = [first.headers.get('etag')!, first.headers.get('last-modified')!];
    expect(etag).toMatch(/^"[\w-]+"$/);
    await eventually(cachedResponses, (keys) => keys.length > before);

    const conditions: Record<string, string>[] = [{ 'if-none-match': etag }, { 'if-none-match': `"other", W/${etag}` }, { 'if-modified-since': lastModified }];
    for (const headers of conditions) {
      const notModified = await get(query, headers);
      expect(notModified.status).toBe(304);
      expect(await notModified.text()).toBe('');
      expect(notModified.headers.get('etag')).toBe(etag);
      expect(notModified.headers.get('cache-control')).toBe('public, max-age=300');
    }
    // Another document's tag says nothing about this one; a POST is never conditional.
    const other = await get(`{ product(id: "${productId(34)}") { name } }`);
    expect((await get(query, { 'if-none-match': other.headers.get('etag')! })).status).toBe(200);
    const post = await fetch(supergraph.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'if-none-match': etag },
      body: JSON.stringify({ query }),
    });
    expect(post.status).toBe(200);

    // Once the product changes, the old copy is stale: the full response, with a new tag.
    const update = await graphql(supergraph.url, `mutation ($id: ID!) { updateProduct(id: $id, input: { name: "Renamed lamp" }) { id name } }`, {
      variables: { id },
      token: admin,
    });
    expect(update.body.errors).toBeUndefined();
    const changed = await get(query, { 'if-none-match': etag });
    expect(changed.status).toBe(200);
    expect((await changed.json()).data.product.name).toBe('Renamed lamp');
    expect(changed.headers.get('etag')).not.toBe(etag);
  });

  it('costs no subgraph call of its own: one createOrder is one orders call, a query asks no root __typename of a subgraph, and neither response shows the cache’s fields', async () => {
    subgraphCalls.length = 0;
    const order = await graphql(supergraph.url, `mutation ($items: [LineItemInput!]!) { createOrder(input: { items: $items }) { id status } }`, {
      variables: { items: [{ productId: productId(41), quantity: 1 }] },
      token: alice,
    });
    expect(order.body.errors).toBeUndefined();
    expect(order.body.data).toEqual({ createOrder: { id: expect.any(String), status: 'PENDING' } });
    // Its plan is one fetch (orders prices the items from catalog itself, not through the gateway).
    expect(subgraphCalls).toEqual([{ subgraph: 'orders', query: expect.stringContaining('createOrder') }]);

    subgraphCalls.length = 0;
    const query = `{ product(id: "${productId(42)}") { name } }`;
    const before = (await cachedResponses()).length;
    const { body } = await graphql(supergraph.url, query);
    expect(body).toEqual({ data: { product: { name: expect.any(String) } } });
    expect(subgraphCalls).toEqual([{ subgraph: 'catalog', query: expect.any(String) }]);
    expect(rootFields(subgraphCalls[0]!.query)).toEqual(['product']);
    // Still cached as before: the same query again calls no subgraph.
    await eventually(cachedResponses, (keys) => keys.length > before);
    subgraphCalls.length = 0;
    expect((await graphql(supergraph.url, query)).body).toEqual(body);
    expect(subgraphCalls).toEqual([]);
  });

  it('shows a product update made through any replica at once, well within the hint', async () => {
    const id = productId(32);
    const query = `{ product(id: "${id}") { name currentPrice } }`;
    const before = (await cachedResponses()).length;
    const original = (await graphql(supergraph.url, query)).body.data!.product;
    await eventually(cachedResponses, (keys) => keys.length > before);

    const newPrice = Math.round(original.currentPrice * 100 + 100) / 100;
    const update = await graphql(
      supergraph.gatewayUrls[1]!,
      `mutation ($id: ID!, $input: UpdateProductInput!) { updateProduct(id: $id, input: $input) { id name currentPrice } }`,
      { variables: { id, input: { name: `${original.name} II`, price: newPrice, salePrice: null } }, token: admin },
    );
    expect(update.body.errors).toBeUndefined();
    // The very next read, through either replica.
    const lookups = (result: string) => readCounter(supergraph.url.replace(/\/graphql$/, '/metrics'), 'gateway_response_cache_lookups_total', { result });
    const changed = await lookups('changed');
    for (const url of supergraph.gatewayUrls) expect((await graphql(url, query)).body.data!.product).toEqual({ name: `${original.name} II`, currentPrice: newPrice });
    // The first replica found the response kept before the write, and counted it as changed; once filled anew, a hit.
    expect(await lookups('changed')).toBe(changed + 1);
    const hits = await lookups('hit');
    await eventually(() => graphql(supergraph.url, query).then(() => lookups('hit')), (count) => count > hits);
  });

  it('never serves a fill that read its subgraph before a write and was stored after the write was answered', async () => {
    // A product no other test reads: neither cache holds it yet.
    const id = productId(35);
    const query = `{ product(id: "${id}") { name } }`;
    // A fill whose catalog answer (the old name) is held until the write below has been answered.
    let release!: () => void;
    const held = new Promise<void>((resolve) => holds.push({ match: id, held: resolve, release: new Promise((done) => (release = done)) }));
    const fill = graphql(supergraph.gatewayUrls[0]!, query);
    await held;
    const update = await graphql(
      supergraph.gatewayUrls[1]!,
      `mutation ($id: ID!) { updateProduct(id: $id, input: { name: "Renamed while a fill was on its way" }) { id name } }`,
      { variables: { id }, token: admin },
    );
    expect(update.body.errors).toBeUndefined();
    release();
    const stale = (await fill).body.data!.product.name;
    expect(stale).not.toBe('Renamed while a fill was on its way');
    // The old answer is stored now, after the write; no request that began after the write reads it.
    await eventually(cachedResponses, (keys) => keys.some(Boolean));
    await new Promise((resolve) => setTimeout(resolve, 50));
    for (const url of [...supergraph.gatewayUrls, ...supergraph.gatewayUrls]) {
      expect((await graphql(url, query)).body.data!.product.name).toBe('Renamed while a fill was on its way');
    }
  });

  it('keeps a write straight to a subgraph until the hint runs out, unless its team invalidates what changed', async () => {
    const id = productId(34);
    const query = `{ product(id: "${id}") { name } }`;
    const before = (await graphql(supergraph.url, query)).body.data!.product.name;
    await eventually(cachedResponses, (keys) => keys.length > 0);
    const write = await graphql(supergraph.subgraphUrl('catalog'), `mutation { updateProduct(id: "${id}", input: { name: "Renamed behind the gateway" }) { id } }`, { token: admin });
    expect(write.body.errors).toBeUndefined();
    // The gateway saw no write: the cached answer stands (its documented bound is the hint's maxAge).
    expect((await graphql(supergraph.gatewayUrls[1]!, query)).body.data!.product.name).toBe(before);

    const invalidate = (headers: Record<string, string>, body: unknown) =>
      fetch(supergraph.url.replace(/\/graphql$/, '/cache/invalidate'), { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
    const entity = [{ kind: 'entity', subgraph: 'catalog', type: 'Product', key: { id } }];
    expect((await invalidate({ 'x-cache-invalidation-key': 'not-the-key' }, entity)).status).toBe(401);
    expect((await invalidate({ authorization: `Bearer ${alice}` }, entity)).status).toBe(403);
    expect((await invalidate({ 'x-cache-invalidation-key': INVALIDATION_KEY }, [{ kind: 'entity', type: 'Product' }])).status).toBe(400);
    const done = await invalidate({ 'x-cache-invalidation-key': INVALIDATION_KEY }, entity);
    expect(done.status).toBe(200);
    expect(await done.json()).toEqual({ invalidated: [{ kind: 'entity', type: 'Product', id }] });
    for (const url of supergraph.gatewayUrls) expect((await graphql(url, query)).body.data!.product.name).toBe('Renamed behind the gateway');
  });
});
