// Rate limits per client and operation, counted in a real Redis shared by two gateway replicas. Small limits
// (5 standard, 3 expensive per 60 s) keep the suite short; each test speaks as its own client.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toGlobalId, type Redis } from '@ordergraph/core';
import { graphql, token, waitFor, type GraphQLResponse } from '@ordergraph/testkit';
import { rateLimitKey } from '@ordergraph/gateway';
import { startSupergraph, type Supergraph } from '@ordergraph/testkit/e2e';

let supergraph: Supergraph;
let inspect: Redis;

beforeAll(async () => {
  supergraph = await startSupergraph({ gateways: 2, redis: true, gatewayEnv: { RATE_LIMIT_MAX: '5', RATE_LIMIT_EXPENSIVE_MAX: '3' } });
  inspect = supergraph.redis!.client;
});
afterAll(() => supergraph?.stop());

/** Sends each request to the two replicas in turn. */
let turn = 0;
const send = (query: string, options: Parameters<typeof graphql>[2] = {}) =>
  graphql(supergraph.gatewayUrls[turn++ % supergraph.gatewayUrls.length]!, query, options);

function expectRateLimited(response: GraphQLResponse, operation: string, limit: number) {
  expect(response.status).toBe(429);
  const retryAfter = Number(response.headers.get('retry-after'));
  expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60).toBe(true);
  expect(response.body.data ?? undefined).toBeUndefined();
  expect(response.body.errors).toEqual([
    expect.objectContaining({ extensions: expect.objectContaining({ code: 'RATE_LIMITED', operation, limit, windowMs: 60_000 }) }),
  ]);
}

const CHEAP = 'query Cheap { products(limit: 1) { id } }';
const REPORT = 'query GenerateReport { products(limit: 1) { id } }';

describe('standard operations', () => {
  it('allow 5 per client and operation across both replicas, then answer 429 RATE_LIMITED with Retry-After', async () => {
    const alice = await token('USER', 'user-0001');
    for (let i = 0; i < 5; i++) expect((await send(CHEAP, { token: alice })).status).toBe(200);
    expectRateLimited(await send(CHEAP, { token: alice }), 'Cheap', 5);
    // Another operation name, or another client, has a bucket of its own.
    expect((await send('query Other { products(limit: 1) { id } }', { token: alice })).status).toBe(200);
    expect((await send(CHEAP, { token: await token('USER', 'user-0002') })).status).toBe(200);
  });

  it('keep their counters in Redis, keyed by user ID and operation, expiring with the window', async () => {
    const carolId = toGlobalId('User', 'user-0003');
    await send(CHEAP, { token: await token('USER', 'user-0003') });
    const key = rateLimitKey('standard', `user:${carolId}`, 'Cheap');
    expect(await inspect.get(key)).toBe('1');
    const ttl = await inspect.pttl(key);
    expect(ttl > 0 && ttl <= 60_000).toBe(true);
  });

  it('key anonymous callers by IP, and ignore X-Forwarded-For unless proxies are trusted', async () => {
    const query = 'query ByAddress { products(limit: 1) { id } }';
    for (let i = 0; i < 5; i++) {
      expect((await send(query, { headers: { 'x-forwarded-for': `203.0.113.${i}` } })).status).toBe(200);
    }
    expectRateLimited(await send(query, { headers: { 'x-forwarded-for': '198.51.100.7' } }), 'ByAddress', 5);
    expect(await inspect.exists(rateLimitKey('standard', 'ip:127.0.0.1', 'ByAddress'))).toBe(1);
  });

  it('count a conditional GET that the response cache answers (304) like any other request', async () => {
    const query = `query Conditional { product(id: "${toGlobalId('Product', 'product-0040')}") { name } }`;
    const get = async (headers: Record<string, string> = {}) => {
      // A GET carries a header that forces a CORS preflight, as the gateway's CSRF protection asks of browsers' GETs.
      const response = await fetch(`${supergraph.url}?${new URLSearchParams({ query })}`, {
        headers: { accept: 'application/json', 'apollo-require-preflight': 'true', ...headers },
      });
      return { status: response.status, headers: response.headers, body: response.status === 304 ? {} : await response.json() } as GraphQLResponse;
    };
    const first = await get();
    expect(first.status).toBe(200);
    await waitFor(async () => (await inspect.keys('ordergraph:response:*')).length > 0, 'the response to be cached');
    const etag = (await get()).headers.get('etag')!;
    for (let i = 0; i < 3; i++) expect((await get({ 'if-none-match': etag })).status).toBe(304);
    expectRateLimited(await get({ 'if-none-match': etag }), 'Conditional', 5);
  });

  it('count an unparseable document as anonymous under the standard limit, and let it fail to parse', async () => {
    const dave = await token('USER', 'user-0004');
    for (let i = 0; i < 5; i++) {
      const response = await send('query GenerateReport {', { token: dave });
      expect(response.status).toBe(400);
      expect(response.body.errors![0]!.extensions?.['code']).toBe('GRAPHQL_PARSE_FAILED');
    }
    expectRateLimited(await send('query GenerateReport {', { token: dave }), 'anonymous', 5);
    // The expensive bucket it names was never touched.
    expect((await send(REPORT, { token: dave })).status).toBe(200);
  });
});

describe('expensive operations', () => {
  it('allow 3 per window, whatever operationName the request claims, aliases, other operations or case', async () => {
    const erin = await token('USER', 'user-0005');
    const attempts: { query: string; operationName?: string }[] = [
      { query: REPORT },
      // Aliased fields and an explicit operationName do not change the operation.
      { query: 'query GenerateReport { a: products(limit: 1) { id } b: products(limit: 1) { name } }', operationName: 'GenerateReport' },
      // The operation that executes is the one selected from the document.
      { query: `${CHEAP} ${REPORT}`, operationName: 'GenerateReport' },
    ];
    for (const attempt of attempts) expect((await send(attempt.query, { token: erin, ...attempt })).status).toBe(200);
    // A renamed copy differing only in case is still GenerateReport.
    expectRateLimited(await send('query generatereport { products(limit: 1) { id } }', { token: erin }), 'GenerateReport', 3);
    // Claiming another name in the request does not run GenerateReport under it: nothing executes.
    const claimed = await send(REPORT, { token: erin, operationName: 'Cheap' });
    expect(claimed.body.data ?? undefined).toBeUndefined();
    expect(claimed.body.errors![0]!.extensions?.['code']).not.toBe('RATE_LIMITED');
    // The cheap operation of the same document still runs, under its own bucket.
    expect((await send(`${CHEAP} ${REPORT}`, { token: erin, operationName: 'Cheap' })).status).toBe(200);
    expect(await inspect.get(rateLimitKey('expensive', `user:${toGlobalId('User', 'user-0005')}`, 'GenerateReport'))).toBe('4');
  });

  it('are counted separately for each expensive name and client', async () => {
    const frank = await token('USER', 'user-0006');
    for (const name of ['ExportAllUsers', 'BulkSearch']) {
      for (let i = 0; i < 3; i++) expect((await send(`query ${name} { products(limit: 1) { id } }`, { token: frank })).status).toBe(200);
      expectRateLimited(await send(`query ${name} { products(limit: 1) { id } }`, { token: frank }), name, 3);
    }
  });
});

describe('a cost budget per client (RATE_LIMIT_COST_PER_WINDOW)', () => {
  let budgeted: Supergraph;
  let next = 0;
  beforeAll(async () => {
    budgeted = await startSupergraph({ gateways: 2, redis: true, gatewayEnv: { RATE_LIMIT_COST_PER_WINDOW: '50', MAX_COMPLEXITY: '40' } });
  });
  afterAll(() => budgeted?.stop());
  const spend = (query: string, options: Parameters<typeof graphql>[2] = {}) => graphql(budgeted.gatewayUrls[next++ % 2]!, query, options);
  // products @listSize(slicingArguments: ["limit"]): 1 + 9 x (id 1) = 10, under a name of its own each time, so only
  // the cost budget can refuse it.
  const priced = (i: number) => `query Priced${i} { products(limit: 9) { id } }`;

  it("charges each operation its estimated cost across both replicas, then answers 429 RATE_LIMITED with Retry-After; another client's budget is its own", async () => {
    const heidi = await token('USER', 'user-0008');
    for (let i = 0; i < 5; i++) expect((await spend(priced(i), { token: heidi })).status).toBe(200);
    expect(await budgeted.redis!.client.get(rateLimitKey('cost', `user:${toGlobalId('User', 'user-0008')}`, 'cost'))).toBe('50');
    const refused = await spend(priced(5), { token: heidi });
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60).toBe(true);
    expect(refused.body.data ?? undefined).toBeUndefined();
    expect(refused.body.errors).toEqual([
      expect.objectContaining({ extensions: expect.objectContaining({ code: 'RATE_LIMITED', operation: 'cost', limit: 50, cost: 10, windowMs: 60_000 }) }),
    ]);
    // Even a cheap operation waits for the next window once the budget is spent.
    expect((await spend('query Tiny { products(limit: 1) { id } }', { token: heidi })).status).toBe(429);
    expect((await spend(priced(0), { token: await token('USER', 'user-0009') })).status).toBe(200);
  });

  it('charges nothing for an operation the complexity limit refuses, and is off unless configured', async () => {
    const ivan = await token('USER', 'user-0010');
    const key = rateLimitKey('cost', `user:${toGlobalId('User', 'user-0010')}`, 'cost');
    expect((await spend(priced(0), { token: ivan })).status).toBe(200);
    const tooComplex = await spend('query Huge { products(limit: 50) { id } }', { token: ivan });
    expect(tooComplex.status).toBe(400);
    expect(tooComplex.body.errors![0]!.extensions?.['code']).toBe('COMPLEXITY_LIMIT_EXCEEDED');
    expect(await budgeted.redis!.client.get(key)).toBe('10');
    // The suite's other gateways have no RATE_LIMIT_COST_PER_WINDOW: they count no cost.
    expect((await send(priced(0), { token: ivan })).status).toBe(200);
    expect(await inspect.exists(key)).toBe(0);
  });
});
