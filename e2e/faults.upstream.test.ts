// Fault injection, part 2: a subgraph that stops answering (SIGSTOP), a slow one, one killed with SIGKILL and
// restarted, and Redis restarted, all under the real processes; and one that refuses every call (HTTP 503). Clients get the other subgraphs' data with an error on
// the fields the failing one owns, within its timeout; repeated failures open the subgraph's circuit (fail fast,
// shown in /readyz) until a probe finds it back.
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toGlobalId } from '@ordergraph/core';
import { freePort, graphql, startRedis, token, type TestRedis } from '@ordergraph/testkit';
import { startProcessSupergraph, startSupergraph, type ProcessSupergraph, type Supergraph } from '@ordergraph/testkit/e2e';

let supergraph: ProcessSupergraph;
let redis: TestRedis;
let buyer: string;
const SUBGRAPH_TIMEOUT_MS = 1_000;
const REQUEST_DEADLINE_MS = 6_000;

beforeAll(async () => {
  redis = await startRedis();
  supergraph = await startProcessSupergraph({
    env: { REDIS_URL: redis.url },
    envOf: {
      gateway: {
        SUBGRAPH_TIMEOUT_MS: String(SUBGRAPH_TIMEOUT_MS),
        REQUEST_DEADLINE_MS: String(REQUEST_DEADLINE_MS),
        CIRCUIT_BREAKER_FAILURES: '3',
        CIRCUIT_BREAKER_RESET_MS: '1500',
        // Every request must reach the subgraphs whose faults it meets: an entity cache hit would answer around them.
        ENTITY_CACHE: 'off',
      },
    },
  });
  buyer = await token('USER', 'user-0001');
}, 120_000);
afterAll(async () => {
  await supergraph?.stop();
  await redis?.close();
});

const PARTIAL = `query ($user: ID!, $product: ID!) { user(id: $user) { name } product(id: $product) { name } }`;
const variables = { user: toGlobalId('User', 'user-0001'), product: toGlobalId('Product', 'product-0001') };
const ask = (url = supergraph.url) => graphql(url, PARTIAL, { variables, token: buyer });

async function readyz(): Promise<{ status: number; body: { subgraphs?: Record<string, string> } }> {
  const response = await fetch(supergraph.url.replace('/graphql', '/readyz'));
  const text = await response.text();
  return { status: response.status, body: response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : {} };
}

/** Asks until the product is back (the circuit's probe succeeded), for at most `attempts` tries. */
async function untilCatalogAnswers(attempts = 100) {
  for (let i = 0; i < attempts; i++) {
    const { body } = await ask();
    if (body.data?.['product']) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error('the catalog never answered again');
}

describe('a subgraph that stops answering', () => {
  it('costs its timeout, not more: the other subgraphs answer, its fields get SUBGRAPH_TIMEOUT; then its circuit opens and fails fast, and a probe closes it', async () => {
    await ask(); // plans warmed
    const catalog = supergraph.processes.catalog;
    catalog.signal('SIGSTOP');
    try {
      const started = Date.now();
      const { status, body } = await ask();
      expect(Date.now() - started).toBeLessThan(REQUEST_DEADLINE_MS);
      expect(status).toBe(200);
      expect(body.data).toEqual({ user: { name: expect.any(String) }, product: null });
      expect(body.errors).toEqual([expect.objectContaining({ path: ['product'], extensions: expect.objectContaining({ code: 'SUBGRAPH_TIMEOUT' }) })]);

      // Three failures in a row open the circuit: the next calls fail at once, without waiting for the timeout.
      await ask();
      await ask();
      const failFast = await ask();
      expect(failFast.body.errors?.[0]?.extensions).toMatchObject({ code: 'SUBGRAPH_UNAVAILABLE' });
      expect(failFast.body.data?.['user']).toEqual({ name: expect.any(String) });
      const ready = await readyz();
      expect(ready.status).toBe(200);
      expect(ready.body.subgraphs).toMatchObject({ catalog: 'open', users: 'closed' });
    } finally {
      catalog.signal('SIGCONT');
    }
    await untilCatalogAnswers();
    expect((await readyz()).body.subgraphs).toMatchObject({ catalog: 'closed' });
  }, 120_000);

  it('a slow subgraph (paused longer than its timeout, then resumed) costs the client only the timeout', async () => {
    const catalog = supergraph.processes.catalog;
    catalog.signal('SIGSTOP');
    const resume = setTimeout(() => catalog.signal('SIGCONT'), SUBGRAPH_TIMEOUT_MS * 2);
    try {
      const { body } = await ask();
      expect(body.data).toEqual({ user: { name: expect.any(String) }, product: null });
      expect(body.errors?.[0]?.extensions).toMatchObject({ code: 'SUBGRAPH_TIMEOUT' });
    } finally {
      clearTimeout(resume);
      catalog.signal('SIGCONT');
    }
    await untilCatalogAnswers();
  }, 120_000);
});

describe('kill -9 and restart', () => {
  it('a killed subgraph: its fields fail with SUBGRAPH_UNAVAILABLE at once, the rest answers, and the restarted process serves again', async () => {
    const users = supergraph.processes.users;
    users.signal('SIGKILL');
    expect(await users.exited).toEqual({ code: null, signal: 'SIGKILL' });
    const { status, body } = await ask();
    expect(status).toBe(200);
    expect(body.data).toEqual({ user: null, product: { name: expect.any(String) } });
    expect(body.errors?.[0]).toMatchObject({ path: ['user'], extensions: { code: 'SUBGRAPH_UNAVAILABLE' } });
    expect(JSON.stringify(body)).not.toMatch(/ECONNREFUSED|127\.0\.0\.1/);
    await users.restart();
    for (let i = 0; ; i++) {
      const again = await ask();
      if (!again.body.errors) break;
      if (i > 50) throw new Error(`users did not come back: ${JSON.stringify(again.body.errors)}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }, 120_000);

  it('a killed gateway restarts and serves', async () => {
    const gateway = supergraph.processes.gateway;
    gateway.signal('SIGKILL');
    await gateway.exited;
    await gateway.restart();
    expect((await ask()).body.errors).toBeUndefined();
  }, 120_000);
});

describe('Redis restart', () => {
  it('requests are answered while Redis is down; /readyz says so, and both come back with it', async () => {
    await redis.stop();
    try {
      const { status, body } = await ask();
      expect(status).toBe(200);
      expect(body.errors).toBeUndefined();
      expect((await readyz()).status).toBe(503);
    } finally {
      await redis.start();
    }
    for (let i = 0; (await readyz()).status !== 200; i++) {
      if (i > 100) throw new Error('the gateway never saw Redis again');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect((await ask()).body.errors).toBeUndefined();
  }, 120_000);
});

describe('a subgraph that refuses every call (503)', () => {
  const RETRIES = 2;
  const RETRY_DELAY_MS = 150;
  /** Far longer than the retries take: a refusal must never be reported as a timeout. */
  const TIMEOUT_MS = 10_000;
  let refusing: http.Server;
  /** When each call reached the refusing catalog. */
  let refusals: number[] = [];
  /** The Retry-After it refuses with, if any. */
  let retryAfter: string | undefined;
  /** Its refusal as a GraphQL response (GraphQL over HTTP lets a server answer 5xx with one) instead of text. */
  let asGraphQL = false;
  let gateway: Supergraph;

  beforeAll(async () => {
    const port = await freePort();
    refusing = http.createServer((req, res) => {
      refusals.push(Date.now());
      const type = asGraphQL ? 'application/graphql-response+json' : 'text/plain';
      const body = asGraphQL ? JSON.stringify({ errors: [{ message: 'Overloaded: try the replica at 10.0.3.7', extensions: { code: 'OVERLOADED' } }] }) : 'service unavailable';
      const headers = { 'content-type': type, ...(retryAfter ? { 'retry-after': retryAfter } : {}) };
      req.resume().on('end', () => res.writeHead(503, headers).end(body));
    });
    await new Promise<void>((resolve) => refusing.listen(port, '127.0.0.1', resolve));
    gateway = await startSupergraph({
      gatewayEnv: {
        SUBGRAPH_CATALOG_URL: `http://127.0.0.1:${port}/graphql`,
        SUBGRAPH_TIMEOUT_MS: String(TIMEOUT_MS),
        UPSTREAM_RETRIES: String(RETRIES),
        UPSTREAM_RETRY_DELAY_MS: String(RETRY_DELAY_MS),
        CIRCUIT_BREAKER_FAILURES: '100',
      },
    });
  }, 120_000);
  afterAll(async () => {
    await gateway?.stop();
    await new Promise((resolve) => refusing?.close(resolve));
  });

  it('fails its fields with SUBGRAPH_UNAVAILABLE as soon as the last of UPSTREAM_RETRIES retries is refused; the other fields are answered', async () => {
    refusals = [];
    const started = Date.now();
    const { status, body } = await ask(gateway.url);
    const answered = Date.now();
    expect(status).toBe(200);
    expect(body.data).toEqual({ user: { name: expect.any(String) }, product: null });
    expect(body.errors).toEqual([expect.objectContaining({ path: ['product'], extensions: expect.objectContaining({ code: 'SUBGRAPH_UNAVAILABLE' }) })]);
    expect(refusals).toHaveLength(1 + RETRIES);
    // No wait after the last refusal: the answer comes before the backoff a further retry would have waited (the
    // delay doubles at each retry), and long before the timeout.
    expect(answered - refusals.at(-1)!).toBeLessThan(RETRY_DELAY_MS * 2 ** (RETRIES + 1));
    expect(answered - started).toBeLessThan(TIMEOUT_MS);
  });

  it('waits the Retry-After a refusal asks for when it ends within the timeout', async () => {
    refusals = [];
    retryAfter = '1';
    try {
      const { body } = await ask(gateway.url);
      expect(body.errors).toEqual([expect.objectContaining({ path: ['product'], extensions: expect.objectContaining({ code: 'SUBGRAPH_UNAVAILABLE' }) })]);
      expect(refusals).toHaveLength(1 + RETRIES);
      expect(refusals[1]! - refusals[0]!).toBeGreaterThanOrEqual(1_000 - 50); // timers may fire a little early
    } finally {
      retryAfter = undefined;
    }
  });

  it('answers a refusal at once when its Retry-After ends past the timeout: SUBGRAPH_UNAVAILABLE, not a wait ending in SUBGRAPH_TIMEOUT', async () => {
    for (const later of [String(TIMEOUT_MS / 1000 + 20), new Date(Date.now() + TIMEOUT_MS + 20_000).toUTCString()]) {
      refusals = [];
      retryAfter = later;
      try {
        const started = Date.now();
        const { body } = await ask(gateway.url);
        expect(body.errors).toEqual([expect.objectContaining({ path: ['product'], extensions: expect.objectContaining({ code: 'SUBGRAPH_UNAVAILABLE' }) })]);
        expect(refusals).toHaveLength(1);
        expect(Date.now() - started).toBeLessThan(TIMEOUT_MS);
      } finally {
        retryAfter = undefined;
      }
    }
  });

  // SUBGRAPH_UNAVAILABLE is the code of a failed call, which the circuit breaker counts (upstream.ts, failedInTransport).
  it('reads a refusal with a GraphQL body as a refusal: SUBGRAPH_UNAVAILABLE after the retries, its message not passed on', async () => {
    refusals = [];
    asGraphQL = true;
    try {
      const { body } = await ask(gateway.url);
      expect(body.data).toEqual({ user: { name: expect.any(String) }, product: null });
      expect(body.errors).toEqual([expect.objectContaining({ path: ['product'], extensions: expect.objectContaining({ code: 'SUBGRAPH_UNAVAILABLE' }) })]);
      expect(JSON.stringify(body)).not.toContain('10.0.3.7');
      expect(refusals).toHaveLength(1 + RETRIES);
    } finally {
      asGraphQL = false;
    }
  });

  it('never retries a mutation: one refusal, SUBGRAPH_UNAVAILABLE', async () => {
    const admin = await token('ADMIN', 'user-0000');
    refusals = [];
    const { body } = await graphql(gateway.url, `mutation ($id: ID!) { updateProduct(id: $id, input: { name: "Refused" }) { id } }`, {
      variables: { id: variables.product },
      token: admin,
    });
    expect(body.errors).toEqual([expect.objectContaining({ path: ['updateProduct'], extensions: expect.objectContaining({ code: 'SUBGRAPH_UNAVAILABLE' }) })]);
    expect(refusals).toHaveLength(1);
  });
});
