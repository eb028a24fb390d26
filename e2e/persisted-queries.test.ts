// Automatic persisted queries (protocol version 1) on a real Redis shared by two gateway replicas, Apollo Client's
// persisted-query link talking to them, and trusted documents: the required and audit modes with an Apollo
// persisted-query manifest (any id; documentId and APQ forms; HTTP, graphql-ws and graphql-sse), the admin bypass, the manifest
// built by `npm run manifest` and reloaded without a restart.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { ApolloClient, HttpLink, InMemoryCache, gql, type TypedDocumentNode } from '@apollo/client';
import { PersistedQueryLink } from '@apollo/client/link/persisted-queries';
import { generatePersistedQueryIdsFromManifest } from '@apollo/persisted-query-lists';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '@ordergraph/composition';
import { toGlobalId, type Redis } from '@ordergraph/core';
import { graphql, readCounter, sseClient, subscribe, token, waitFor, withoutRequestIds, wsClient, type GraphQLResponse, type SubscribeRequest } from '@ordergraph/testkit';
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
    it('a document too deep is refused when registered, and never stored: its hash stays unknown', async () => {
      const deep = `{ product(id: "${productId}") { id } user(id: "x") { orders(limit: 1) { user { orders(limit: 1) { user { orders(limit: 1) { user { id } } } } } } } }`;
      const hash = sha256(deep);
      const response = await post({ url: supergraph.url, hash, query: deep });
      expect(response.body.errors).toEqual([expect.objectContaining({ extensions: expect.objectContaining({ code: 'DEPTH_LIMIT_EXCEEDED' }) })]);
      expect(await inspect.exists(`ordergraph:apq:${hash}`)).toBe(0);
      expect((await post({ url: supergraph.url, hash })).body).toEqual({ errors: [notFound] });
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
      // A registration refused by the rate limit stores nothing (a flood of them would stay in Redis for a day).
      const another = 'query BulkSearch { products(limit: 2) { id } }';
      expect((await post({ url: supergraph.url, hash: sha256(another), query: another, token: bob })).status).toBe(429);
      expect(await inspect.exists(`ordergraph:apq:${sha256(another)}`)).toBe(0);
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

/** Writes an Apollo persisted-query manifest with these operations, atomically (as a deployment replaces it). */
function writeManifest(path: string, operations: { id: string; body: string; name?: string; type?: string }[]) {
  writeFileSync(`${path}.tmp`, JSON.stringify({ format: 'apollo-persisted-query-manifest', version: 1, operations }));
  renameSync(`${path}.tmp`, path);
}

/** Sends a request body as it is, by POST, optionally with a token. */
async function postBody(url: string, body: unknown, bearer?: string): Promise<GraphQLResponse> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(bearer ? { authorization: `Bearer ${bearer}` } : {}) },
    body: JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, body: withoutRequestIds(await response.json(), response.headers) };
}

/** A GET with `?documentId=` (GraphQL-over-HTTP persisted documents), with the header CSRF protection asks for. */
async function getDocument(url: string, documentId: string, variables?: Record<string, unknown>): Promise<GraphQLResponse> {
  const search = new URLSearchParams({ documentId, ...(variables ? { variables: JSON.stringify(variables) } : {}) });
  const response = await fetch(`${url}?${search}`, { headers: { accept: 'application/json', 'apollo-require-preflight': 'true' } });
  return { status: response.status, headers: response.headers, body: withoutRequestIds(await response.json(), response.headers) };
}

const codeOf = (response: GraphQLResponse) => response.body.errors?.[0]?.extensions?.['code'];
const unknownDocuments = (url: string, outcome: string) => readCounter(url.replace(/\/graphql$/, '/metrics'), 'gateway_unknown_documents_total', { outcome });

describe('trusted documents (PERSISTED_QUERIES=required, audit)', () => {
  // Ids as a manifest may hold them: Apollo's SHA-256 of the body, or anything else (Hive's app~version~hash, a name).
  const allowed = `query AllowedProduct($id: ID!) { product(id: $id) { id name } }`;
  const names = `query ProductNames { products(limit: 2) { id name } }`;
  const subscription = `subscription NewOrders { newOrderCreated { id } }`;
  const cancel = `mutation CancelFromManifest($id: ID!) { cancelOrder(id: $id) { id } }`;
  const operations = [
    { id: sha256(allowed), body: allowed, name: 'AllowedProduct', type: 'query' as const },
    { id: 'storefront~1.4.0~product-names', body: names, name: 'ProductNames', type: 'query' as const },
    { id: 'storefront~1.4.0~new-orders', body: subscription, name: 'NewOrders', type: 'subscription' as const },
    { id: 'storefront~1.4.0~cancel', body: cancel, name: 'CancelFromManifest', type: 'mutation' as const },
  ];
  const logs: string[] = [];
  const logLines = () =>
    logs
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  let dir: string;
  let manifest: string;
  let required: Supergraph;
  let audit: Supergraph;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ordergraph-manifest-'));
    manifest = join(dir, 'persisted-query-manifest.json');
    writeManifest(manifest, operations);
    const settings = { PERSISTED_QUERIES_MANIFEST: manifest, PERSISTED_QUERIES_MANIFEST_POLL_MS: '50' };
    [required, audit] = await Promise.all([
      startSupergraph({ redis: true, gatewayEnv: { PERSISTED_QUERIES: 'required', ...settings } }),
      startSupergraph({
        env: { LOG_LEVEL: 'warn' },
        logs: { write: (line: string) => void logs.push(line) },
        gatewayEnv: { PERSISTED_QUERIES: 'audit', ...settings },
      }),
    ]);
  });
  afterAll(async () => {
    await required?.stop();
    await audit?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  describe('required', () => {
    it('serves the manifest’s documents by documentId (POST and GET) and by the APQ hash, whatever the id', async () => {
      const variables = { id: productId };
      for (const response of [
        await postBody(required.url, { documentId: sha256(allowed), variables }),
        await getDocument(required.url, sha256(allowed), variables),
        await post({ url: required.url, hash: sha256(allowed), variables }),
        await get({ url: required.url, hash: sha256(allowed), variables }),
      ]) {
        expect(response.status).toBe(200);
        expect(response.body).toEqual({ data: { product: { id: productId, name: expect.any(String) } } });
      }
      for (const response of [
        await postBody(required.url, { documentId: 'storefront~1.4.0~product-names' }),
        await getDocument(required.url, 'storefront~1.4.0~product-names'),
        await post({ url: required.url, hash: 'storefront~1.4.0~product-names' }),
      ]) {
        expect(response.status).toBe(200);
        expect(response.body.data!.products).toHaveLength(2);
      }
    });

    it('answers an unknown id with 404 PERSISTED_QUERY_NOT_FOUND, in either form', async () => {
      for (const response of [
        await postBody(required.url, { documentId: 'storefront~0.9.0~gone' }),
        await getDocument(required.url, 'storefront~0.9.0~gone'),
        await post({ url: required.url, hash: sha256('{ products { id } }') }),
      ]) {
        expect(response.status).toBe(404);
        expect(response.body).toEqual({ errors: [notFound] });
      }
    });

    it('refuses any document sent as text with 400 PERSISTED_QUERY_NOT_ALLOWED, also to a signed-in USER, and counts it', async () => {
      const before = await unknownDocuments(required.url, 'refused');
      const user = await token('USER', 'user-0001');
      for (const response of [
        await graphql(required.url, '{ products(limit: 1) { id } }'),
        await graphql(required.url, '{ products(limit: 1) { id } }', { token: user }),
        // The manifest's own text is still text: only ids run.
        await post({ url: required.url, hash: sha256(allowed), query: allowed, variables: { id: productId } }),
      ]) {
        expect(response.status).toBe(400);
        expect(response.body.data ?? undefined).toBeUndefined();
        expect(response.body.errors).toEqual([expect.objectContaining({ extensions: { code: 'PERSISTED_QUERY_NOT_ALLOWED' } })]);
      }
      expect(await unknownDocuments(required.url, 'refused')).toBe(before + 3);
    });

    it('lets an ADMIN token send any document, and counts it', async () => {
      const admin = await token('ADMIN', 'user-0000');
      const before = await unknownDocuments(required.url, 'admin');
      const response = await graphql(required.url, 'query AdminAdHoc { products(limit: 1) { id } }', { token: admin });
      expect(response.status).toBe(200);
      expect(response.body.data!.products).toHaveLength(1);
      expect(await unknownDocuments(required.url, 'admin')).toBe(before + 1);
    });

    it('never runs a manifest mutation by GET (405)', async () => {
      const before = await required.subgraphRequests();
      const response = await getDocument(required.url, 'storefront~1.4.0~cancel', { id: toGlobalId('Order', 'nothing') });
      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe('POST');
      expect(await required.subgraphRequests()).toBe(before);
    });

    it('refuses malformed persisted-document requests with 400 BAD_REQUEST', async () => {
      for (const body of [
        { documentId: sha256(allowed), query: allowed, variables: { id: productId } },
        { documentId: 42 },
        { documentId: 'x'.repeat(513) },
        { variables: {} },
      ]) {
        const response = await postBody(required.url, body);
        expect(response.status, JSON.stringify(body).slice(0, 80)).toBe(400);
        expect(codeOf(response)).toBe('BAD_REQUEST');
      }
    });

    it('holds over graphql-ws: a documentId or hash alone runs, query text is refused, an admin may send it', async () => {
      const user = wsClient(required.url, { token: await token('USER', 'user-0001') });
      const admin = wsClient(required.url, { token: await token('ADMIN', 'user-0000') });
      try {
        const once = async (client: typeof user, request: SubscribeRequest & { documentId?: string }) => {
          const results = subscribe(client, request.query, request.variables, request);
          return (await results.received(1))[0]!;
        };
        expect((await once(user, { query: '', documentId: 'storefront~1.4.0~product-names' })).data!['products']).toHaveLength(2);
        expect((await once(user, { query: '', extensions: extensions(sha256(allowed)), variables: { id: productId } })).data).toEqual({
          product: { id: productId, name: expect.any(String) },
        });
        const refused = await once(user, { query: '{ products(limit: 1) { id } }' });
        expect(refused.errors?.[0]?.extensions?.['code']).toBe('PERSISTED_QUERY_NOT_ALLOWED');
        expect((await once(admin, { query: '{ products(limit: 1) { id } }' })).data!['products']).toHaveLength(1);
        // A subscription from the manifest, by id, is accepted and stays open.
        const byId: SubscribeRequest & { documentId: string } = { query: '', documentId: 'storefront~1.4.0~new-orders' };
        const open = subscribe(admin, '', undefined, byId);
        await waitFor(async () => (await readCounter(required.url.replace(/\/graphql$/, '/metrics'), 'graphql_active_subscriptions')) === 1, 'the subscription');
        expect(open.results).toEqual([]);
        await open.close();
      } finally {
        await user.dispose();
        await admin.dispose();
      }
    });

    it('holds over graphql-sse: a documentId alone runs', async () => {
      const client = sseClient(required.url, { token: await token('USER', 'user-0001') });
      try {
        const byId: SubscribeRequest & { documentId: string } = { query: '', documentId: 'storefront~1.4.0~product-names' };
        const [result] = await subscribe(client, '', undefined, byId).received(1);
        expect(result!.data!['products']).toHaveLength(2);
      } finally {
        client.dispose();
      }
    });

    it('works with Apollo Client 4 and ids from the manifest (generatePersistedQueryIdsFromManifest)', async () => {
      const apollo = new ApolloClient({
        cache: new InMemoryCache(),
        link: new PersistedQueryLink(
          generatePersistedQueryIdsFromManifest({ loadManifest: () => ({ format: 'apollo-persisted-query-manifest', version: 1, operations }) }),
        ).concat(new HttpLink({ uri: required.url })),
      });
      // The client sends the manifest's id for the document it holds (the body the manifest names).
      const result = await apollo.query<{ products: { id: string; name: string }[] }>({ query: gql(names), fetchPolicy: 'network-only' });
      expect(result.data?.products).toHaveLength(2);
    });
  });

  describe('audit', () => {
    it('serves a document outside the manifest, logs it once as a JSON line, and counts every request', async () => {
      const adHoc = 'query AuditedAdHoc { products(limit: 1) { id } }';
      const before = await unknownDocuments(audit.url, 'served');
      for (let i = 0; i < 2; i++) {
        const response = await graphql(audit.url, adHoc);
        expect(response.status).toBe(200);
        expect(response.body.data!.products).toHaveLength(1);
      }
      expect(await unknownDocuments(audit.url, 'served')).toBe(before + 2);
      const logged = logLines().filter((line) => line['event'] === 'unknown_document' && line['documentHash'] === sha256(adHoc));
      expect(logged).toEqual([
        expect.objectContaining({
          service: 'gateway',
          level: 40,
          persistedQueries: 'audit',
          operationName: 'AuditedAdHoc',
          operationType: 'query',
          msg: 'served a document the persisted documents manifest does not hold',
        }),
      ]);
    });

    it('serves the manifest’s documents by id and as text without logging them, and keeps APQ working', async () => {
      const before = await unknownDocuments(audit.url, 'served');
      expect((await postBody(audit.url, { documentId: 'storefront~1.4.0~product-names' })).body.data!.products).toHaveLength(2);
      expect((await graphql(audit.url, names)).body.data!.products).toHaveLength(2);
      expect(await unknownDocuments(audit.url, 'served')).toBe(before);
      // A client still on automatic persisted queries: registered, then by hash alone; served, and counted as unknown.
      const apq = 'query AuditedApq { products(limit: 1) { name } }';
      expect((await post({ url: audit.url, hash: sha256(apq) })).body).toEqual({ errors: [notFound] });
      expect((await post({ url: audit.url, hash: sha256(apq), query: apq })).body.data!.products).toHaveLength(1);
      expect((await post({ url: audit.url, hash: sha256(apq) })).body.data!.products).toHaveLength(1);
      expect(await unknownDocuments(audit.url, 'served')).toBe(before + 2);
    });
  });

  describe('the manifest, rebuilt and reloaded without a restart', () => {
    it('npm run manifest builds Apollo’s format from a folder of .graphql documents; the gateway serves the new ids, and keeps them when a bad file follows', async () => {
      const documents = join(dir, 'client-documents');
      mkdirSync(join(documents, 'nested'), { recursive: true });
      writeFileSync(join(documents, 'product.graphql'), 'query ReleasedProduct($id: ID!) {\n  product(id: $id) {\n    id\n    name\n  }\n}\n');
      writeFileSync(join(documents, 'nested', 'names.graphql'), 'query ReleasedNames {\n  products(limit: 3) {\n    name\n  }\n}\n');
      const built = join(dir, 'built-manifest.json');
      const { stdout } = await promisify(execFile)(resolve(REPO_ROOT, 'node_modules/.bin/tsx'), ['--conditions=source', resolve(REPO_ROOT, 'scripts/manifest.ts'), documents, '--output', built], { cwd: REPO_ROOT });
      expect(stdout).toContain('with 2 operations');
      const output = JSON.parse(readFileSync(built, 'utf8')) as { format: string; version: number; operations: { id: string; name: string; type: string; body: string }[] };
      expect({ ...output, operations: [...output.operations].sort((a, b) => b.name.localeCompare(a.name)) }).toEqual({
        format: 'apollo-persisted-query-manifest',
        version: 1,
        operations: [
          { id: expect.stringMatching(/^[0-9a-f]{64}$/), name: 'ReleasedProduct', type: 'query', body: expect.stringContaining('__typename') },
          { id: expect.stringMatching(/^[0-9a-f]{64}$/), name: 'ReleasedNames', type: 'query', body: expect.stringContaining('products(limit: 3)') },
        ],
      });
      for (const operation of output.operations) expect(operation.id).toBe(sha256(operation.body));
      const released = output.operations.find((operation) => operation.name === 'ReleasedNames')!;

      // Unknown before the release; the gateways pick the new manifest up by themselves.
      expect((await postBody(required.url, { documentId: released.id })).status).toBe(404);
      writeManifest(manifest, [...operations, ...output.operations]);
      for (const url of [required.url, audit.url]) {
        await waitFor(async () => (await postBody(url, { documentId: released.id })).status === 200, 'the reloaded manifest');
        expect((await postBody(url, { documentId: released.id })).body.data!.products).toHaveLength(3);
      }

      // A broken file: the gateway keeps what it had, and says so in its log.
      writeFileSync(manifest, '{ "format": "apollo-persisted-query-manifest", "version": 1, "operations": [');
      await waitFor(() => logLines().some((line) => line['msg'] === 'persisted documents manifest is invalid; keeping the previous one'), 'the error logged');
      expect(logLines().find((line) => line['msg'] === 'persisted documents manifest is invalid; keeping the previous one')).toMatchObject({ level: 50, manifest });
      for (const url of [required.url, audit.url]) {
        expect((await postBody(url, { documentId: released.id })).body.data!.products).toHaveLength(3);
        expect((await postBody(url, { documentId: 'storefront~1.4.0~product-names' })).body.data!.products).toHaveLength(2);
      }
    });
  });
});
