// Hostile input against the supergraph as separate processes in production mode, by class: every request is refused
// with its own code at a 4xx status, quickly, before any subgraph works on it, with no internal detail and no long echo
// of what was sent; afterwards every process is healthy, no log line repeats the input, and neither /metrics nor Redis
// has grown with it. Also the HTTP hygiene every response shares: CORS, security headers, validators.
import { Agent, request, type IncomingMessage } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { createLogger, createRedis, toGlobalId, type Redis } from '@ordergraph/core';
import { SIGNATURE_EXTENSION, signOperation } from '@ordergraph/subgraph-kit';
import { graphql, readCounter, startRedis, subscribe, token, waitFor, wsClient, type TestRedis } from '@ordergraph/testkit';
import { startProcessSupergraph, type ProcessSupergraph } from '@ordergraph/testkit/e2e';

const SECRET = 'bad-input-secret-of-at-least-32-characters';
const SIGNING_SECRET = 'bad-input-subgraph-signing-secret-0000000';
const ALLOWED_ORIGIN = 'https://shop.example';
const INTERNAL = /originalError|stacktrace|serviceName|ECONNREFUSED|127\.0\.0\.1|RangeError|SyntaxError|\.[cm]?[jt]s:\d+/;

let supergraph: ProcessSupergraph;
let redis: TestRedis;
let inspect: Redis;
let admin: string;

beforeAll(async () => {
  redis = await startRedis();
  supergraph = await startProcessSupergraph({
    env: { NODE_ENV: 'production', JWT_SECRET: SECRET, SUBGRAPH_SIGNING_SECRET: SIGNING_SECRET, SHUTDOWN_DELAY: '0', REDIS_URL: redis.url, LOG_LEVEL: 'info' },
    envOf: { gateway: { CORS_ORIGINS: ALLOWED_ORIGIN } },
  });
  inspect = createRedis(redis.url, createLogger('bad-input', 'silent'));
  admin = await token('ADMIN', 'user-0000', { secret: SECRET });
}, 240_000);
afterAll(async () => {
  inspect?.disconnect();
  await supergraph?.stop();
  await redis?.close();
});

const metricsOf = (url: string) => url.replace(/\/graphql$/, '/metrics');
const metricsSize = async (url: string) => (await (await fetch(metricsOf(url))).text()).length;
const subgraphCalls = async () => {
  const { users, orders, catalog } = supergraph.processes;
  const counts = [users, orders, catalog].map((service) => readCounter(metricsOf(service.url), 'graphql_request_duration_seconds_count'));
  return (await Promise.all(counts)).reduce((sum, count) => sum + count, 0);
};

interface Sent {
  body?: string;
  headers?: Record<string, string>;
}

/** POSTs a raw body (JSON unless said otherwise) to the gateway, as an administrator. */
const send = ({ body, headers = {} }: Sent) =>
  fetch(supergraph.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', authorization: `Bearer ${admin}`, ...headers },
    body: body ?? null,
  });
const operation = (query: string, extra: Record<string, unknown> = {}) => JSON.stringify({ query, ...extra });

const deepList = (levels: number) => `${'['.repeat(levels)}1${']'.repeat(levels)}`;
const long = (length: number, character = 'x') => character.repeat(length);

/** One request of each class: what it is, what is sent, the status and code it must get. */
const ROWS: [string, () => Sent, number, string][] = [
  ['10,000 levels of [[[...]]] in a variable', () => ({ body: `{"query":"query ($x: Int) { __typename }","variables":{"x":${deepList(10_000)}}}` }), 400, 'VARIABLES_LIMIT_EXCEEDED'],
  ['2,000 values in a variable', () => ({ body: operation('query ($x: [Int]) { __typename }', { variables: { x: Array(2000).fill(1) } }) }), 400, 'VARIABLES_LIMIT_EXCEEDED'],
  ['a 128 KB string as createUser(email:)', () => ({ body: operation('mutation ($i: CreateUserInput!) { createUser(input: $i) { id } }', { variables: { i: { email: `${long(128 * 1024)}@example.com`, name: 'A' } } }) }), 400, 'STRING_TOO_LONG'],
  ['a 255-character email, over its own limit', () => ({ body: operation('mutation ($i: CreateUserInput!) { createUser(input: $i) { id } }', { variables: { i: { email: `${long(243)}@example.com`, name: 'A' } } }) }), 400, 'STRING_TOO_LONG'],
  ['a 100,000-character search term', () => ({ body: operation('query ($q: String!) { search(query: $q) { __typename } }', { variables: { q: long(100_000) } }) }), 400, 'STRING_TOO_LONG'],
  ['a 201-character search term written in the document', () => ({ body: operation(`{ search(query: "${long(201)}") { __typename } }`) }), 400, 'STRING_TOO_LONG'],
  ['a 20,000-character string literal', () => ({ body: operation(`{ product(id: "${long(20_000)}") { id } }`) }), 400, 'STRING_TOO_LONG'],
  ...[1, 2, 3, 4, 5].map((n): [string, () => Sent, number, string] => [`100,000-character operation name #${n} in the document`, () => ({ body: operation(`query ${long(100_000, String.fromCharCode(64 + n))} { __typename }`) }), 400, 'OPERATION_NAME_TOO_LONG']),
  ...[1, 2, 3, 4, 5].map((n): [string, () => Sent, number, string] => [`100,000-character operationName #${n}`, () => ({ body: operation('{ __typename }', { operationName: long(100_000, String.fromCharCode(96 + n)) }) }), 400, 'OPERATION_NAME_TOO_LONG']),
  ['101 aliases of __typename (graphql-cop)', () => ({ body: operation(`query cop { ${Array.from({ length: 101 }, (_, i) => `a${i}: __typename`).join(' ')} }`) }), 400, 'ALIAS_LIMIT_EXCEEDED'],
  ['500 duplicated __typename (graphql-cop)', () => ({ body: operation(`query cop { ${'__typename '.repeat(500)} }`) }), 400, 'DUPLICATE_FIELD_LIMIT_EXCEEDED'],
  ['11 directives on one field', () => ({ body: operation(`query cop { __typename ${'@skip(if: false) '.repeat(11)} }`) }), 400, 'DIRECTIVE_LIMIT_EXCEEDED'],
  ['10 unknown directives on one field (graphql-cop)', () => ({ body: operation(`query cop { __typename ${'@aa'.repeat(10)} }`) }), 400, 'GRAPHQL_VALIDATION_FAILED'],
  ['5,001 tokens', () => ({ body: operation(`{ __typename(n: [${' 1'.repeat(4992)}]) }`) }), 400, 'TOKEN_LIMIT_EXCEEDED'],
  ['a 100,000-character unknown field', () => ({ body: operation(`{ ${long(100_000)} }`) }), 400, 'GRAPHQL_VALIDATION_FAILED'],
  ['a body over 1 MiB', () => ({ body: operation(`{ __typename } # ${long(2 * 1024 * 1024)}`) }), 413, 'PAYLOAD_TOO_LARGE'],
  ['a subscription with Accept: multipart/mixed without subscriptionSpec', () => ({ body: operation('subscription { newOrderCreated { id } }'), headers: { accept: 'multipart/mixed' } }), 406, 'NOT_ACCEPTABLE'],
  ['a subscription with Accept: application/json', () => ({ body: operation('subscription { newOrderCreated { id } }'), headers: { accept: 'application/json' } }), 406, 'NOT_ACCEPTABLE'],
];

describe('bad input, by class', () => {
  const before: Record<string, number> = {};
  beforeAll(async () => {
    before['gateway'] = await metricsSize(supergraph.url);
    before['catalog'] = await metricsSize(supergraph.processes.catalog.url);
    before['subgraph calls'] = await subgraphCalls();
  });

  it.each(ROWS)('%s: refused with its code, no subgraph asked, no echo', async (_class, request, status, code) => {
    const response = await send(request());
    const text = await response.text();
    expect(response.status).toBe(status);
    const errors = (JSON.parse(text) as { errors: { message: string; extensions: { code: string } }[] }).errors;
    expect(errors).toHaveLength(1);
    expect(errors[0]!.extensions.code).toBe(code);
    // At most a short prefix of anything sent comes back.
    expect(text.length).toBeLessThan(1000);
    expect(text).not.toMatch(INTERNAL);
  });

  it('a body over 1 MiB still being written when the 413 comes: the client reads it, and the connection goes on', async () => {
    const declared = 4 * 1024 * 1024;
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const outgoing = request(supergraph.url, {
      method: 'POST',
      agent,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${admin}`, 'content-length': declared },
    });
    const answered = new Promise<IncomingMessage>((resolve, reject) => outgoing.once('response', resolve).once('error', reject));
    outgoing.write(long(64 * 1024));
    const response = await answered;
    const socket = response.socket;
    // Only now the rest of the body: a gateway that closed on answering would have reset the connection by then.
    for (let sent = 64 * 1024; sent < declared; sent += 64 * 1024) outgoing.write(long(64 * 1024));
    outgoing.end();
    const chunks: Buffer[] = [];
    for await (const chunk of response) chunks.push(chunk as Buffer);
    expect(response.statusCode).toBe(413);
    expect(JSON.parse(Buffer.concat(chunks).toString()).errors[0].extensions.code).toBe('PAYLOAD_TOO_LARGE');
    const next = await new Promise<IncomingMessage>((resolve, reject) =>
      request(supergraph.url.replace(/\/graphql$/, '/healthz'), { agent }, resolve).once('error', reject).end(),
    );
    expect(next.socket).toBe(socket);
    next.resume();
    expect(next.statusCode).toBe(200);
    agent.destroy();
  });

  it('a WebSocket message over 1 MiB: the connection is closed (1009), the gateway goes on', async () => {
    const socket = new WebSocket(supergraph.url.replace(/^http/, 'ws'), 'graphql-transport-ws');
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    const closed = new Promise<number>((resolve) => socket.once('close', resolve));
    socket.send(JSON.stringify({ type: 'connection_init', payload: { pad: long(1024 * 1024) } }));
    expect(await closed).toBe(1009);
  });

  it('no subgraph worked on any of them, and no subscription was left open upstream', async () => {
    expect(await subgraphCalls()).toBe(before['subgraph calls']);
    const orders = metricsOf(supergraph.processes.orders.url);
    await waitFor(async () => (await readCounter(orders, 'graphql_active_subscriptions')) === 0, 'no open subscription on orders');
    expect(await inspect.pubsub('CHANNELS')).toEqual([]);
  });

  it('grows neither /metrics nor Redis with what was sent', async () => {
    // Series for the refusals' codes appear once; a client's names never become labels.
    expect((await metricsSize(supergraph.url)) - before['gateway']!).toBeLessThan(16 * 1024);
    expect((await metricsSize(supergraph.processes.catalog.url)) - before['catalog']!).toBeLessThan(4 * 1024);
    const keys = await inspect.keys('*');
    expect(keys.length).toBeLessThan(ROWS.length);
    for (const key of keys) expect(key.length).toBeLessThan(100);
  });

  it('leaves every process healthy, with no error logged and no log line repeating the input', async () => {
    for (const service of Object.values(supergraph.processes)) {
      expect((await fetch(service.url.replace(/\/graphql$/, '/healthz'))).status).toBe(200);
      for (const line of service.logs) {
        expect(JSON.stringify(line).length).toBeLessThan(4000);
        expect(Number(line['level'])).toBeLessThan(50);
      }
    }
    // And it still answers real work.
    const answer = await send({ body: operation('query ($id: ID!) { product(id: $id) { id } }', { variables: { id: toGlobalId('Product', 'product-0001') } }) });
    expect(answer.status).toBe(200);
  });
});

describe('HTTP hygiene', () => {
  const raw = (path: string, init: RequestInit = {}) => fetch(supergraph.url.replace(/\/graphql$/, path), init);

  it('sends the same security headers on every response: data, errors, health, readiness, metrics, not found', async () => {
    const responses = await Promise.all([
      send({ body: operation('{ __typename }') }),
      send({ body: '{' }),
      raw('/graphql', { headers: { accept: 'application/json' } }),
      raw('/healthz'),
      raw('/readyz'),
      raw('/metrics'),
      raw('/nowhere'),
    ]);
    for (const response of responses) {
      await response.arrayBuffer();
      expect(response.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      expect(response.headers.get('x-frame-options')).toBe('DENY');
      expect(response.headers.get('referrer-policy')).toBe('no-referrer');
      expect(response.headers.get('strict-transport-security')).toMatch(/^max-age=\d+/);
    }
  });

  it('allows CORS_ORIGINS only, never with credentials, and reflects no other origin', async () => {
    const preflight = (origin: string) =>
      raw('/graphql', { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type' } });
    const allowed = await preflight(ALLOWED_ORIGIN);
    expect(allowed.headers.get('access-control-allow-origin')).toBe(ALLOWED_ORIGIN);
    expect(allowed.headers.get('access-control-allow-credentials')).toBeNull();
    expect(allowed.headers.get('vary')).toMatch(/Origin/);
    const simple = await send({ body: operation('{ __typename }'), headers: { origin: ALLOWED_ORIGIN } });
    expect(simple.headers.get('access-control-allow-origin')).toBe(ALLOWED_ORIGIN);
    for (const response of [await preflight('https://evil.example'), await send({ body: operation('{ __typename }'), headers: { origin: 'https://evil.example' } })]) {
      expect(response.headers.get('access-control-allow-origin')).toBeNull();
      expect(response.headers.get('access-control-allow-credentials')).toBeNull();
    }
  });

  it('gives a no-store response no validator, and a cacheable one exactly one ETag', async () => {
    const rawHeaders = async (query: string) => {
        return new Promise<string[]>((resolve, reject) => {
        const url = `${supergraph.url}?${new URLSearchParams({ query })}`;
        const headers = { accept: 'application/json', 'apollo-require-preflight': 'true' };
        request(url, { headers }, (response) => {
          response.resume();
          response.on('end', () => resolve(response.rawHeaders.filter((_, i) => i % 2 === 0).map((name) => name.toLowerCase())));
        })
          .on('error', reject)
          .end();
      });
    };
    const productName = `{ product(id: "${toGlobalId('Product', 'product-0001')}") { name } }`;
    const cacheable = await rawHeaders(productName);
    expect(cacheable.filter((name) => name === 'etag')).toHaveLength(1);
    const noStore = await rawHeaders('{ products(limit: 1) { id } }');
    expect(noStore.filter((name) => name === 'etag' || name === 'last-modified')).toEqual([]);
  });
});

describe('subgraphs reached directly', () => {
  const SERVICE = '{ _service { sdl } }';
  const ENTITIES = 'query ($r: [_Any!]!) { _entities(representations: $r) { ... on User { id email } } }';
  const signed = (secret: string, query: string, variables?: Record<string, unknown>) => ({
    query,
    ...(variables ? { variables } : {}),
    extensions: { [SIGNATURE_EXTENSION]: signOperation(secret, { query, variables }) },
  });
  const direct = (url: string, body: object) =>
    fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${admin}` }, body: JSON.stringify(body) });
  const representations = { r: [{ __typename: 'User', id: toGlobalId('User', 'user-0001') }] };

  it.each(['users', 'orders', 'catalog'] as const)('%s refuses what the gateway did not sign, _service included, with 403 FORBIDDEN', async (name) => {
    const { url } = supergraph.processes[name];
    for (const body of [
      { query: SERVICE },
      { query: ENTITIES, variables: representations },
      { query: `{ ${Array.from({ length: 200 }, (_, i) => `a${i}: __typename`).join(' ')} }` },
      // Signed with another secret; a signature lifted from another operation; one whose variables were changed.
      signed('not-the-secret-of-this-deployment-00000', SERVICE),
      { ...signed(SIGNING_SECRET, '{ __typename }'), query: SERVICE },
      { ...signed(SIGNING_SECRET, ENTITIES, { r: [] }), variables: representations },
    ]) {
      const response = await direct(url, body);
      expect(response.status).toBe(403);
      const answer = (await response.json()) as { data?: unknown; errors: { message: string; extensions: { code: string } }[] };
      expect(answer.data).toBeUndefined();
      expect(answer.errors).toEqual([expect.objectContaining({ message: 'Only the gateway may call this service', extensions: expect.objectContaining({ code: 'FORBIDDEN' }) })]);
    }
    expect((await fetch(url)).status).toBe(403);
  });

  it("serves an operation signed with the deployment's secret: the gateway's and the peers' way in", async () => {
    const response = await direct(supergraph.processes.users.url, signed(SIGNING_SECRET, ENTITIES, representations));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ data: { _entities: [{ id: representations.r[0]!.id, email: 'user1@example.com' }] } });
  });

  it('orders refuses a WebSocket subscription the gateway did not sign, and leaves nothing open', async () => {
    const refused = subscribe(wsClient(supergraph.processes.orders.url, { token: admin }), 'subscription { newOrderCreated { id } }');
    expect(await refused.ended).toEqual([expect.objectContaining({ message: 'Only the gateway may call this service', extensions: expect.objectContaining({ code: 'FORBIDDEN' }) })]);
    expect(await readCounter(metricsOf(supergraph.processes.orders.url), 'graphql_active_subscriptions')).toBe(0);
  });

  it("the gateway's signed calls go through, over HTTP and WebSocket, and so do the subgraphs' signed calls to each other", async () => {
    const buyer = await token('USER', 'user-0003', { secret: SECRET });
    const events = subscribe(wsClient(supergraph.url, { token: buyer }), 'subscription { newOrderCreated { id user { name } items { product { name } } } }');
    await waitFor(async () => (await readCounter(metricsOf(supergraph.processes.orders.url), 'graphql_active_subscriptions')) === 1, 'the subscription open on orders');
    // createOrder: orders asks the catalog for prices.
    const created = await graphql(supergraph.url, 'mutation ($p: ID!) { createOrder(input: { items: [{ productId: $p, quantity: 1 }] }) { id } }', {
      variables: { p: toGlobalId('Product', 'product-0001') },
      token: buyer,
    });
    expect(created.body.errors).toBeUndefined();
    const orderId = created.body.data!['createOrder'].id as string;
    const [event] = await events.received(1);
    expect(event).toEqual({ data: { newOrderCreated: { id: orderId, user: { name: expect.any(String) }, items: [{ product: { name: expect.any(String) } }] } } });
    await events.close();
    // node(id) and search: users asks orders and the catalog.
    const { body } = await graphql(supergraph.url, 'query ($id: ID!, $q: String!) { node(id: $id) { __typename id } search(query: $q) { __typename } }', {
      variables: { id: orderId, q: orderId },
      token: buyer,
    });
    expect(body).toEqual({ data: { node: { __typename: 'Order', id: orderId }, search: [{ __typename: 'Order' }] } });
  });
});
