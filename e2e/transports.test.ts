// The edge's rules on every transport an operation can arrive by besides HTTP: graphql-ws (subprotocol
// graphql-transport-ws), the legacy graphql-ws subprotocol (subscriptions-transport-ws) and SSE (graphql-sse), each
// with its real client, against two gateway replicas sharing a real Redis. Operation limits, introspection, rate limits,
// automatic persisted queries, the allow-list and authentication hold over each exactly as over HTTP; a refusal reaches
// the client as that operation's result (over SSE, as the same HTTP error response), never as the end of a connection
// that carries other subscriptions. Events are triggered at the orders subgraph itself, so the gateway's small limits
// only count what a test measures.
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { toGlobalId, type Redis, type Role } from '@ordergraph/core';
import {
  graphql,
  legacyWsClient,
  readCounter,
  sseClient,
  subscribe,
  token,
  waitFor,
  withoutRequestIds,
  wsClient,
  type Stream,
  type SubscriptionResult,
  type WsClientOptions,
} from '@ordergraph/testkit';
import { rateLimitKey } from '@ordergraph/gateway';
import { SIGNATURE_EXTENSION, signOperation } from '@ordergraph/subgraph-kit';
import { TEST_SIGNING_SECRET, startSupergraph, type Supergraph } from '@ordergraph/testkit/e2e';

const SECRET = 'transports-test-secret-of-32-characters';
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const persisted = (hash: string) => ({ persistedQuery: { version: 1, sha256Hash: hash } });

const LISTED = 'subscription Listed { newOrderCreated { id } }';
const LISTED_QUERY = 'query ListedProducts { products(limit: 1) { id } }';

let supergraph: Supergraph;
let locked: Supergraph;
let inspect: Redis;
let manifestDir: string;

beforeAll(async () => {
  manifestDir = mkdtempSync(join(tmpdir(), 'ordergraph-manifest-'));
  const manifest = join(manifestDir, 'persisted-query-manifest.json');
  const operations = [LISTED, LISTED_QUERY].map((body) => ({ id: sha256(body), body }));
  writeFileSync(manifest, JSON.stringify({ format: 'apollo-persisted-query-manifest', version: 1, operations }));
  [supergraph, locked] = await Promise.all([
    // Production: introspection for administrators only, and no "Did you mean" in any error.
    startSupergraph({
      gateways: 2,
      redis: true,
      env: { NODE_ENV: 'production', JWT_SECRET: SECRET },
      gatewayEnv: { RATE_LIMIT_MAX: '3', RATE_LIMIT_EXPENSIVE_MAX: '2' },
    }),
    startSupergraph({
      redis: true,
      env: { JWT_SECRET: SECRET },
      // `allowlist`, the former name of `required`; without the admin bypass, as these callers are administrators.
      gatewayEnv: { PERSISTED_QUERIES: 'allowlist', PERSISTED_QUERIES_MANIFEST: manifest, PERSISTED_QUERIES_ADMIN_BYPASS: 'off' },
    }),
  ]);
  inspect = supergraph.redis!.client;
});
afterAll(async () => {
  await supergraph?.stop();
  await locked?.stop();
  rmSync(manifestDir, { recursive: true, force: true });
});

/** Every test speaks as callers of its own, so that rate-limit buckets never carry over from one test to the next. */
let nextUser = 100;
async function caller(role: Role, options: { expiresIn?: string } = {}) {
  const local = `user-${nextUser++}`;
  return { id: toGlobalId('User', local), token: await token(role, local, { secret: SECRET, ...options }) };
}

interface Client {
  iterate(request: { query: string }): AsyncIterableIterator<unknown>;
  dispose(): void;
}
const clients: Client[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) client.dispose();
  await Promise.all([activeAre(supergraph, 0), activeAre(locked, 0)]);
});

const TRANSPORTS = [
  { transport: 'graphql-ws (graphql-transport-ws)', connect: wsClient, sse: false, hashAlone: true },
  { transport: 'graphql-ws (legacy subprotocol graphql-ws)', connect: legacyWsClient, sse: false, hashAlone: false },
  { transport: 'SSE (graphql-sse)', connect: (url: string, options: WsClientOptions) => sseClient(url, options), sse: true, hashAlone: true },
];

/** Subscription streams open on every gateway replica and on the orders subgraph. */
/** Waits until the gateways serve `count` streams, and orders `upstream` (identical ones share one per gateway). */
async function activeAre(target: Supergraph, count: number, upstream = count) {
  const gauge = (url: string) => readCounter(url.replace(/\/graphql$/, '/metrics'), 'graphql_active_subscriptions');
  await waitFor(async () => {
    const gateways = (await Promise.all(target.gatewayUrls.map(gauge))).reduce((sum, value) => sum + value, 0);
    return gateways === count && (await gauge(target.subgraphUrl('orders'))) === upstream;
  }, `${count} active subscriptions, ${upstream} upstream`);
}

/**
 * Places an order through the orders subgraph itself, signed as the gateway signs (production subgraphs serve nothing
 * else): every newOrderCreated subscriber of an administrator gets it.
 */
async function placeOrder(target: Supergraph): Promise<string> {
  const admin = await caller('ADMIN');
  const query = 'mutation Place($p: ID!) { createOrder(input: { items: [{ productId: $p, quantity: 1 }] }) { id } }';
  const variables = { p: toGlobalId('Product', 'product-0001') };
  const signature = signOperation(TEST_SIGNING_SECRET, { query, variables });
  const { body } = await graphql(target.subgraphUrl('orders'), query, { variables, token: admin.token, extensions: { [SIGNATURE_EXTENSION]: signature } });
  expect(body.errors).toBeUndefined();
  return body.data!.createOrder.id;
}

interface Outcome {
  data?: Record<string, any> | null;
  errors?: readonly { message: string; extensions?: Record<string, any> }[];
  /** Over SSE, a refusal before any stream is an HTTP error response. */
  status?: number;
  retryAfter?: string | null;
}

/** The first thing an operation gets: its first result, or the refusal that ended it. */
async function outcome(stream: Stream<SubscriptionResult>): Promise<Outcome> {
  const ended = await Promise.race([stream.received(1).then(() => false), stream.ended.then(() => true)]);
  if (stream.results[0]) return stream.results[0];
  expect(ended).toBe(true);
  const failure = (await stream.ended) as unknown;
  if (Array.isArray(failure)) return { errors: failure }; // an `error` message
  const response = (failure as { response?: Response } | undefined)?.response;
  if (!response) throw new Error(`ended without a result: ${String(failure)}`);
  return { status: response.status, retryAfter: response.headers.get('retry-after'), ...withoutRequestIds(await eventStreamResult(response), response.headers) };
}

/** The result an event-stream response carries in its one `next` event (how yoga answers a refused SSE request). */
async function eventStreamResult(response: Response): Promise<Outcome> {
  const text = await response.text();
  expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
  return JSON.parse(/^event: next\ndata: (.*)$/m.exec(text)![1]!) as Outcome;
}

/** One refusal with `code` and `extensions`, as a client receives it: no data, no internal extension. */
function expectRefused(result: Outcome, code: string, extensions: Record<string, unknown> = {}) {
  expect(result.data ?? undefined).toBeUndefined();
  expect(result.errors).toContainEqual(expect.objectContaining({ extensions: { code, ...extensions } }));
  for (const error of result.errors!) expect(Object.keys(error.extensions ?? {})).not.toContain('http');
}

describe.each(TRANSPORTS)('over $transport', ({ connect, sse, hashAlone }) => {
  const open = (target: Supergraph, as?: string, url = target.url) => {
    const client = connect(url, as ? { token: as } : {}) as Client;
    clients.push(client);
    return client;
  };

  it('refuses operations over the depth, complexity, alias, token and directive limits before any subgraph is called', async () => {
    const { token: as } = await caller('ADMIN');
    const client = open(supergraph, as);
    const deep = 'user { orders(limit: 1) { user { orders(limit: 1) { user { orders(limit: 1) { id } } } } } }';
    const refusals: [string, Record<string, unknown> | undefined, string, Record<string, unknown>][] = [
      [`subscription Deep { newOrderCreated { ${deep} } }`, undefined, 'DEPTH_LIMIT_EXCEEDED', { maxDepth: 7, depth: 8 }],
      [
        'subscription Complex { newOrderCreated { user { orders(limit: 100) { items { product { id name price currentPrice } } } } } }',
        undefined,
        'COMPLEXITY_LIMIT_EXCEEDED',
        { maxComplexity: 5000, complexity: 5103 },
      ],
      [
        `subscription Aliased { newOrderCreated { ${Array.from({ length: 31 }, (_, i) => `a${i}: id`).join(' ')} } }`,
        undefined,
        'ALIAS_LIMIT_EXCEEDED',
        { maxAliases: 30 },
      ],
      [`subscription Long { newOrderCreated { id ${'__typename '.repeat(5000)} } }`, undefined, 'TOKEN_LIMIT_EXCEEDED', { maxTokens: 5000 }],
      [
        `subscription Decorated($yes: Boolean!) { newOrderCreated { id ${'@include(if: $yes) '.repeat(11)} } }`,
        { yes: true },
        'DIRECTIVE_LIMIT_EXCEEDED',
        { maxDirectives: 10, directives: 11 },
      ],
    ];
    const before = await supergraph.subgraphRequests();
    for (const [query, variables, code, figures] of refusals) {
      const result = await outcome(subscribe(client, query, variables));
      expectRefused(result, code, figures);
      if (sse) expect(result.status ?? 200).toBe(200); // a GraphQL request error, in an event stream
    }
    // Errors follow the production error policy on this transport too: no suggestion reveals the schema.
    const typo = await outcome(subscribe(client, 'subscription Typo { newOrderCreated { idd } }'));
    expectRefused(typo, 'GRAPHQL_VALIDATION_FAILED');
    expect(typo.errors![0]!.message).toBe('Cannot query field "idd" on type "Order".');
    expect(await supergraph.subgraphRequests()).toBe(before);
  });

  it('answers introspection as the policy says: FORBIDDEN for a user, the schema for an administrator', async () => {
    const [user, admin] = await Promise.all([caller('USER'), caller('ADMIN')]);
    const query = 'query Schema { __schema { queryType { name } } }';
    expectRefused(await outcome(subscribe(open(supergraph, user.token), query)), 'FORBIDDEN');
    expect(await outcome(subscribe(open(supergraph, admin.token), query))).toEqual({ data: { __schema: { queryType: { name: 'Query' } } } });
  });

  it('counts each subscription under its client and operation name, shared with HTTP and the other replica; a refusal ends only that operation', async () => {
    const viewer = await caller('ADMIN');
    const client = open(supergraph, viewer.token);
    const WATCH = 'subscription Watch { newOrderCreated { id } }';
    const REPORT = 'subscription GenerateReport { newOrderCreated { id } }';
    const accepted = [subscribe(client, WATCH), subscribe(client, WATCH), subscribe(client, WATCH)];
    // The expensive bucket is the client's, whatever the transport or the replica: one report by HTTP on the other one.
    const byHttp = await graphql(supergraph.gatewayUrls[1]!, 'query GenerateReport { products(limit: 1) { id } }', { token: viewer.token });
    expect(byHttp.status).toBe(200);
    accepted.push(subscribe(client, REPORT));
    await activeAre(supergraph, 4, 2); // the three Watch share one stream

    for (const [query, operation, limit] of [[WATCH, 'Watch', 3], [REPORT, 'GenerateReport', 2]] as const) {
      const refused = await outcome(subscribe(client, query));
      expectRefused(refused, 'RATE_LIMITED', { operation, limit, windowMs: 60_000, retryAfterMs: expect.any(Number) });
      if (sse) {
        expect(refused.status).toBe(429);
        expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1);
      }
    }
    expect(await inspect.get(rateLimitKey('expensive', `user:${viewer.id}`, 'GenerateReport'))).toBe('3');

    const order = await placeOrder(supergraph);
    for (const stream of accepted) expect((await stream.received(1))[0]!.data).toEqual({ newOrderCreated: { id: order } });
  });

  it('serves automatic persisted queries: registered with the query, then run by hash alone on any replica', async () => {
    const { token: as } = await caller('ADMIN');
    const query = `subscription Persisted${sse ? 'Sse' : hashAlone ? 'Ws' : 'Legacy'} { newOrderCreated { id } }`;
    const hash = sha256(query);
    const client = open(supergraph, as);
    // graphql-ws and graphql-sse need `query` to be a string: the hash goes alone with an empty one.
    const byHash = (target: Client) => subscribe(target, '', undefined, { extensions: persisted(hash) });
    if (hashAlone) expectRefused(await outcome(byHash(client)), 'PERSISTED_QUERY_NOT_FOUND');

    const mismatch = await outcome(subscribe(client, query, undefined, { extensions: persisted(sha256('another document')) }));
    expectRefused(mismatch, 'PERSISTED_QUERY_MISMATCH');
    if (sse) expect(mismatch.status).toBe(400);

    const streams = [subscribe(client, query, undefined, { extensions: persisted(hash) })];
    await activeAre(supergraph, 1);
    expect(await inspect.get(`ordergraph:apq:${hash}`)).toBe(query);
    if (hashAlone) streams.push(byHash(open(supergraph, as, supergraph.gatewayUrls[1]!)));
    await activeAre(supergraph, streams.length);
    const order = await placeOrder(supergraph);
    for (const stream of streams) expect((await stream.received(1))[0]!.data).toEqual({ newOrderCreated: { id: order } });
  });

  it('serves only the allow-list’s operations, by hash alone, and refuses anything else clearly', async () => {
    const { token: as } = await caller('ADMIN');
    const client = open(locked, as);
    const refusals: [Parameters<typeof subscribe>, string, number][] = [
      [[client, 'subscription { newOrderCreated { id } }'], 'PERSISTED_QUERY_NOT_ALLOWED', 400],
      [[client, LISTED, undefined, { extensions: persisted(sha256(LISTED)) }], 'PERSISTED_QUERY_NOT_ALLOWED', 400],
    ];
    if (hashAlone) refusals.push([[client, '', undefined, { extensions: persisted(sha256('unknown')) }], 'PERSISTED_QUERY_NOT_FOUND', 404]);
    for (const [request, code, status] of refusals) {
      const refused = await outcome(subscribe(...request));
      expectRefused(refused, code);
      if (sse) expect(refused.status).toBe(status);
    }
    if (!hashAlone) return; // this client cannot send a hash alone

    // The same connection goes on to run what the list holds.
    const listed = subscribe(client, '', undefined, { extensions: persisted(sha256(LISTED)) });
    expect(await outcome(subscribe(client, '', undefined, { extensions: persisted(sha256(LISTED_QUERY)) }))).toMatchObject({
      data: { products: [{ id: expect.any(String) }] },
    });
    await activeAre(locked, 1);
    const order = await placeOrder(locked);
    expect((await listed.received(1))[0]!.data).toEqual({ newOrderCreated: { id: order } });
  });

  it('holds a stream only as long as its token: when it expires, a last UNAUTHENTICATED result ends it, and the next operation is refused', async () => {
    const shortLived = await caller('ADMIN', { expiresIn: '2s' });
    let closed: number | undefined;
    const client = connect(supergraph.url, { token: shortLived.token, onClosed: (event) => (closed = event.code) }) as Client;
    clients.push(client);
    const early = subscribe(client, 'subscription Early { newOrderCreated { id } }');
    await activeAre(supergraph, 1);
    expect(await outcome(early)).toEqual({ errors: [{ message: 'Token expired', extensions: { code: 'UNAUTHENTICATED' } }] });
    expect(await early.ended).toBeUndefined(); // completed, not failed
    await activeAre(supergraph, 0); // and released upstream

    const late = await subscribe(client, 'subscription Late { newOrderCreated { id } }').ended;
    if (sse) {
      const response = (late as { response: Response }).response;
      expect(response.status).toBe(401);
      expect((await response.json()).errors[0].extensions.code).toBe('UNAUTHENTICATED');
    } else {
      // As for a token that does not verify at connection_init: the connection is closed with 4403 (Forbidden).
      await waitFor(() => closed !== undefined, 'the connection to close');
      expect(closed).toBe(4403);
    }
  });
});
