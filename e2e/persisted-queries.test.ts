// Automatic persisted queries (protocol version 1) on a real Redis shared by two gateway replicas, Apollo Client's
// persisted-query link talking to them, and the allow-list mode with an Apollo persisted-query manifest.
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApolloClient, HttpLink, InMemoryCache, gql, type TypedDocumentNode } from '@apollo/client';
import { PersistedQueryLink } from '@apollo/client/link/persisted-queries';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toGlobalId, type Redis } from '@ordergraph/core';
import { graphql, token, withoutRequestIds, type GraphQLResponse } from '@ordergraph/testkit';
import { startSupergraph, type Supergraph } from '@ordergraph/testkit/e2e';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const productId = toGlobalId('Product', 'product-0007');

let supergraph: Supergraph;
let inspect: Redis;

beforeAll(async () => {
  supergraph = await startSupergraph({ gateways: 2, redis: true, gatewayEnv: { RATE_LIMIT_EXPENSIVE_MAX: '2' } });
  inspect = supergraph.redis!.client;
});
afterAll(() => supergraph?.stop());

interface PersistedRequest {
  url: string;
  hash: string;
  query?: string;
  variables?: Record<string, unknown>;
  token?: string;
}

const extensions = (hash: string) => ({ persistedQuery: { version: 1, sha256Hash: hash } });

async function post({ url, hash, query, variables, token }: PersistedRequest): Promise<GraphQLResponse> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ ...(query ? { query } : {}), variables, extensions: extensions(hash) }),
  });
  return { status: response.status, headers: response.headers, body: withoutRequestIds(await response.json(), response.headers) };
}

async function get({ url, hash, query, variables }: PersistedRequest): Promise<GraphQLResponse> {
  const search = new URLSearchParams({ extensions: JSON.stringify(extensions(hash)) });
  if (query) search.set('query', query);
  if (variables) search.set('variables', JSON.stringify(variables));
  // A GET carries a header that forces a CORS preflight, as the gateway's CSRF protection asks of browsers' GETs.
  const response = await fetch(`${url}?${search}`, { headers: { accept: 'application/json', 'apollo-require-preflight': 'true' } });
  return { status: response.status, headers: response.headers, body: withoutRequestIds(await response.json(), response.headers) };
}

const notFound = { message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } };

describe('automatic persisted queries', () => {
  const query = `query PersistedProduct($id: ID!) { product(id: $id) { id name } }`;
  const hash = sha256(query);
  const variables = { id: productId };

  it('answers an unknown hash with 200 PersistedQueryNotFound, registers the query with its hash, then serves it on every replica', async () => {
    const [first, second] = supergraph.gatewayUrls as [string, string];
    const miss = await post({ url: first, hash, variables });
    expect(miss.status).toBe(200);
    expect(miss.body).toEqual({ errors: [notFound] });

    const registered = await post({ url: first, hash, query, variables });
    expect(registered.body.data!.product).toMatchObject({ id: productId });
    expect(await inspect.get(`ordergraph:apq:${hash}`)).toBe(query);
    expect(await inspect.ttl(`ordergraph:apq:${hash}`)).toBeGreaterThan(0);

    for (const url of [second, first]) {
      expect((await post({ url, hash, variables })).body.data!.product).toMatchObject({ id: productId });
      expect((await get({ url, hash, variables })).body.data!.product).toMatchObject({ id: productId });
    }
  });

  it('costs one Redis round trip per request once a replica knows the hash: the rate limit, no lookup', async () => {
    const [first] = supergraph.gatewayUrls as [string, string];
    const known = `query KnownHash($id: ID!) { product(id: $id) { id } }`;
    // Signed in, so that the response cache (for anonymous callers) stays out of the count.
    const admin = await token('ADMIN', 'user-0000');
    await post({ url: first, hash: sha256(known), query: known, variables, token: admin });
    const calls = async () =>
      new Map([...(await inspect.info('commandstats')).matchAll(/^cmdstat_(\w+):calls=(\d+)/gm)].map(([, name, count]) => [name!, Number(count)]));
    const before = await calls();
    for (let i = 0; i < 5; i++) expect((await post({ url: first, hash: sha256(known), variables, token: admin })).body.data!.product).toMatchObject({ id: productId });
    const after = await calls();
    const sent = (name: string) => (after.get(name) ?? 0) - (before.get(name) ?? 0);
    // The rate limit's script (EVALSHA, which runs SET, INCRBY and PTTL inside Redis) and no GET of the document.
    expect([sent('evalsha'), sent('get'), sent('mget'), sent('exists')]).toEqual([5, 0, 0, 0]);
  });

  it('serves hash-only GET requests, answering an unknown hash with 200 PersistedQueryNotFound', async () => {
    const other = `{ product(id: "${productId}") { price } }`;
    const miss = await get({ url: supergraph.url, hash: sha256(other) });
    expect(miss.status).toBe(200);
    expect(miss.body).toEqual({ errors: [notFound] });
    expect((await get({ url: supergraph.url, hash: sha256(other), query: other })).body.data!.product.price).toEqual(expect.any(Number));
    expect((await get({ url: supergraph.gatewayUrls[1]!, hash: sha256(other) })).body.data!.product.price).toEqual(expect.any(Number));
  });

  it('refuses a query whose hash does not match with 400, and registers nothing', async () => {
    const wrong = sha256('something else');
    const response = await post({ url: supergraph.url, hash: wrong, query: `{ products(limit: 1) { id } }` });
    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual([expect.objectContaining({ extensions: { code: 'PERSISTED_QUERY_MISMATCH' } })]);
    expect(await inspect.exists(`ordergraph:apq:${wrong}`)).toBe(0);
  });

  it('never runs a mutation by GET (405), registered or not', async () => {
    const mutation = `mutation { cancelOrder(id: "${toGlobalId('Order', 'nothing')}") { id } }`;
    const hash = sha256(mutation);
    // Registered by POST (anonymous, so it changes nothing).
    expect((await post({ url: supergraph.url, hash, query: mutation })).body.errors![0]!.extensions?.['code']).toBe('UNAUTHENTICATED');
    const before = await supergraph.subgraphRequests();
    for (const request of [{ hash }, { hash, query: mutation }]) {
      const response = await get({ url: supergraph.gatewayUrls[1]!, ...request });
      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe('POST');
    }
    expect(await supergraph.subgraphRequests()).toBe(before);
  });

  describe('never bypass limits or auth', () => {
    it('a persisted document too deep is refused each time it is sent by hash', async () => {
      const deep = `{ product(id: "${productId}") { id } user(id: "x") { orders(limit: 1) { user { orders(limit: 1) { user { orders(limit: 1) { user { id } } } } } } } }`;
      const hash = sha256(deep);
      for (const request of [{ hash, query: deep }, { hash }]) {
        const response = await post({ url: supergraph.url, ...request });
        expect(response.body.errors).toEqual([expect.objectContaining({ extensions: expect.objectContaining({ code: 'DEPTH_LIMIT_EXCEEDED' }) })]);
      }
    });

    it('a persisted document runs with the caller’s rights, and a bad token is still refused with 401', async () => {
      const query = `query ($id: ID!) { user(id: $id) { email } }`;
      const hash = sha256(query);
      const variables = { id: toGlobalId('User', 'user-0001') };
      const alice = await token('USER', 'user-0001');
      expect((await post({ url: supergraph.url, hash, query, variables, token: alice })).body.data!.user.email).toBe('user1@example.com');
      const anonymous = await post({ url: supergraph.url, hash, variables });
      expect(anonymous.body.data!.user).toBeNull();
      expect(anonymous.body.errors![0]!.extensions?.['code']).toBe('UNAUTHENTICATED');
      expect((await post({ url: supergraph.url, hash, variables, token: 'not-a-token' })).status).toBe(401);
    });

    it('a persisted expensive operation counts against its rate limit', async () => {
      const report = 'query BulkSearch { products(limit: 1) { id } }';
      const hash = sha256(report);
      const bob = await token('USER', 'user-0002');
      expect((await post({ url: supergraph.url, hash, query: report, token: bob })).status).toBe(200);
      expect((await post({ url: supergraph.gatewayUrls[1]!, hash, token: bob })).status).toBe(200);
      const limited = await post({ url: supergraph.url, hash, token: bob });
      expect(limited.status).toBe(429);
      expect(limited.body.errors![0]!.extensions).toMatchObject({ code: 'RATE_LIMITED', operation: 'BulkSearch' });
    });
  });
});

describe('Apollo Client with its persisted-query link (GET for hashed queries)', () => {
  interface Sent {
    method: string;
    hashOnly: boolean;
  }

  /** An Apollo Client on one replica that records how each request travelled. */
  function client(url: string, sent: Sent[]) {
    const recordingFetch: typeof fetch = async (input, init) => {
      const method = init?.method ?? 'GET';
      const hashOnly = method === 'GET' ? !new URL(String(input)).searchParams.has('query') : !JSON.parse(String(init?.body)).query;
      sent.push({ method, hashOnly });
      return fetch(input, init);
    };
    return new ApolloClient({
      cache: new InMemoryCache(),
      link: new PersistedQueryLink({ sha256, useGETForHashedQueries: true }).concat(
        new HttpLink({ uri: url, fetch: recordingFetch, headers: { 'apollo-require-preflight': 'true' } }),
      ),
      defaultOptions: { query: { fetchPolicy: 'network-only' } },
    });
  }

  const PRODUCT: TypedDocumentNode<{ product: { id: string; name: string; currentPrice: number } }, { id: string }> = gql`
    query ClientProduct($id: ID!) {
      product(id: $id) {
        id
        name
        currentPrice
      }
    }
  `;

  it('registers on a miss, then sends the hash alone by GET, on either replica', async () => {
    const sent: Sent[] = [];
    const first = client(supergraph.url, sent);
    const result = await first.query({ query: PRODUCT, variables: { id: productId } });
    expect(result.data?.product).toMatchObject({ id: productId, name: expect.any(String) });
    // Hash alone by GET, PersistedQueryNotFound, then the query with its hash by POST.
    expect(sent).toEqual([
      { method: 'GET', hashOnly: true },
      { method: 'POST', hashOnly: false },
    ]);
    await first.query({ query: PRODUCT, variables: { id: productId } });
    expect(sent[2]).toEqual({ method: 'GET', hashOnly: true });

    const elsewhere: Sent[] = [];
    const second = client(supergraph.gatewayUrls[1]!, elsewhere);
    expect((await second.query({ query: PRODUCT, variables: { id: productId } })).data?.product).toMatchObject({ id: productId });
    expect(elsewhere).toEqual([{ method: 'GET', hashOnly: true }]);
  });

  it('sends mutations by POST', async () => {
    const sent: Sent[] = [];
    const apollo = client(supergraph.url, sent);
    const admin = await token('ADMIN', 'user-0000');
    const result = await apollo.mutate<{ updateProduct: { id: string; name: string } }>({
      mutation: gql`
        mutation ClientRename($id: ID!, $input: UpdateProductInput!) {
          updateProduct(id: $id, input: $input) {
            id
            name
          }
        }
      `,
      variables: { id: toGlobalId('Product', 'product-0150'), input: { name: 'Client Lamp' } },
      context: { headers: { authorization: `Bearer ${admin}` } },
    });
    expect(result.data?.updateProduct.name).toBe('Client Lamp');
    expect(sent.every((request) => request.method === 'POST')).toBe(true);
  });
});

describe('allow-list mode (PERSISTED_QUERIES=allowlist)', () => {
  const allowed = `query AllowedProduct($id: ID!) { product(id: $id) { id name } }`;
  let dir: string;
  let locked: Supergraph;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ordergraph-manifest-'));
    const manifest = join(dir, 'persisted-query-manifest.json');
    writeFileSync(
      manifest,
      JSON.stringify({
        format: 'apollo-persisted-query-manifest',
        version: 1,
        operations: [{ id: sha256(allowed), body: allowed, name: 'AllowedProduct', type: 'query' }],
      }),
    );
    locked = await startSupergraph({ redis: true, gatewayEnv: { PERSISTED_QUERIES: 'allowlist', PERSISTED_QUERIES_MANIFEST: manifest } });
  });
  afterAll(async () => {
    await locked?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves the manifest’s hashes by POST and GET', async () => {
    for (const send of [post, get]) {
      const response = await send({ url: locked.url, hash: sha256(allowed), variables: { id: productId } });
      expect(response.body.data!.product).toMatchObject({ id: productId });
    }
  });

  it('answers an unknown hash with 404 PERSISTED_QUERY_NOT_FOUND', async () => {
    const response = await post({ url: locked.url, hash: sha256('{ products { id } }') });
    expect(response.status).toBe(404);
    expect(response.body.errors).toEqual([notFound]);
  });

  it('refuses a free-form query, with or without a hash, with PERSISTED_QUERY_NOT_ALLOWED', async () => {
    const freeForm = await graphql(locked.url, '{ products(limit: 1) { id } }');
    const withHash = await post({ url: locked.url, hash: sha256(allowed), query: allowed, variables: { id: productId } });
    for (const response of [freeForm, withHash]) {
      expect(response.status).toBe(400);
      expect(response.body.data ?? undefined).toBeUndefined();
      expect(response.body.errors).toEqual([expect.objectContaining({ extensions: { code: 'PERSISTED_QUERY_NOT_ALLOWED' } })]);
    }
  });
});
