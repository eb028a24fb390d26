// Redis beyond one node, on real redis-server processes: two replicas (each an orders instance behind a gateway of its
// own, plus the supergraph's gateway) share rate limits, persisted queries, the response cache and order events
// through a Redis Cluster of three primaries, and through a Sentinel-watched primary that fails over under traffic.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger, createRedis, redisTarget, toGlobalId } from '@ordergraph/core';
import { graphql, readCounter, startRedisCluster, startRedisSentinel, subscribe, token, waitFor, wsClient, type TestCluster, type TestSentinel } from '@ordergraph/testkit';
import { startReplicas, type Replicated } from '@ordergraph/testkit/e2e';

const productQuery = (n: number) => `{ product(id: "${toGlobalId('Product', `product-${String(n).padStart(4, '0')}`)}") { id name currentPrice } }`;
const PLACE_ORDER = `mutation ($p: ID!) { createOrder(input: { items: [{ productId: $p, quantity: 1 }] }) { id } }`;

async function persisted(url: string, query: string, withQuery: boolean) {
  const sha256Hash = createHash('sha256').update(query).digest('hex');
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...(withQuery ? { query } : {}), extensions: { persistedQuery: { version: 1, sha256Hash } } }),
  });
  return (await response.json()) as { data?: unknown; errors?: { extensions?: { code?: string } }[] };
}

/** A persisted query registered through one gateway runs by its hash alone through another. */
async function expectSharedPersistedQueries(register: string, use: string, n: number) {
  const query = productQuery(n);
  expect((await persisted(register, query, true)).data).toBeDefined();
  expect(await persisted(use, query, false)).toMatchObject({ data: { product: { name: expect.any(String) } } });
}

/** An order placed through one replica reaches a subscriber on the other (each has its own orders instance). */
async function expectSharedEvents(deployment: Replicated, admin: string) {
  const [a, b] = [deployment.replicas[0]!, deployment.replicas[1]!];
  const created = subscribe(wsClient(b.url, { token: admin }), `subscription { newOrderCreated { id } }`);
  try {
    await waitFor(async () => (await readCounter(b.orders.replace('/graphql', '/metrics'), 'graphql_active_subscriptions')) === 1, 'the subscription on B');
    const placed = await graphql(a.url, PLACE_ORDER, { variables: { p: toGlobalId('Product', 'product-0006') }, token: admin });
    expect(placed.body.errors).toBeUndefined();
    expect((await created.received(1))[0]!.data?.['newOrderCreated'].id).toBe(placed.body.data!.createOrder.id);
  } finally {
    await created.close();
  }
}

describe('a Redis Cluster of three primaries', () => {
  let cluster: TestCluster;
  let deployment: Replicated;
  let admin: string;
  beforeAll(async () => {
    cluster = await startRedisCluster();
    deployment = await startReplicas(2, { env: { REDIS_CLUSTER_NODES: cluster.nodes }, gatewayEnv: { RATE_LIMIT_EXPENSIVE_MAX: '4', ENTITY_CACHE: 'on' } });
    admin = await token('ADMIN', 'user-0000');
  });
  afterAll(async () => {
    await deployment?.stop();
    await cluster?.close();
  });

  it('shares persisted queries between gateways', async () => {
    await expectSharedPersistedQueries(deployment.replicas[0]!.url, deployment.replicas[1]!.url, 11);
  });

  it('counts a rate limit across gateways', async () => {
    const gateways = [deployment.supergraph.url, ...deployment.replicas.map((replica) => replica.url)];
    const query = `query GenerateReport ${productQuery(10)}`;
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await graphql(gateways[i % 3]!, query, { token: admin })).status);
    expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
  });

  it('shares cached responses and drops them everywhere when a mutation changes their entities', async () => {
    const [a, b] = [deployment.replicas[0]!.url, deployment.replicas[1]!.url];
    const query = productQuery(12);
    const first = await graphql(a, query);
    const requests = await deployment.supergraph.subgraphRequests();
    expect((await graphql(b, query)).body).toEqual(first.body);
    expect(await deployment.supergraph.subgraphRequests()).toBe(requests);

    const id = toGlobalId('Product', 'product-0012');
    const update = await graphql(a, `mutation ($id: ID!) { updateProduct(id: $id, input: { name: "Clustered lamp" }) { id name } }`, { variables: { id }, token: admin });
    expect(update.body.errors).toBeUndefined();
    expect((await graphql(b, query)).body.data!.product.name).toBe('Clustered lamp');
  });

  it('delivers order events across replicas', async () => {
    await expectSharedEvents(deployment, admin);
  });

  it('shares the entity cache, and a write through one replica is read back through the other', async () => {
    const [a, b] = [deployment.replicas[0]!.url, deployment.replicas[1]!.url];
    const hits = (url: string) => readCounter(url.replace('/graphql', '/metrics'), 'gateway_entity_cache_lookups_total', { result: 'hit' });
    // Signed in: the entity cache answers, not the response cache (anonymous callers only).
    const query = productQuery(16);
    for (let i = 0; i < 3; i++) expect((await graphql(a, query, { token: admin })).body.errors).toBeUndefined();
    const before = await hits(b);
    await graphql(b, query, { token: admin });
    expect(await hits(b)).toBe(before + 1);
    const id = toGlobalId('Product', 'product-0016');
    const update = await graphql(b, `mutation ($id: ID!) { updateProduct(id: $id, input: { name: "Clustered chair" }) { id } }`, { variables: { id }, token: admin });
    expect(update.body.errors).toBeUndefined();
    expect((await graphql(a, query, { token: admin })).body.data!.product.name).toBe('Clustered chair');
  });
});

describe('Redis Sentinel', () => {
  let sentinel: TestSentinel;
  let deployment: Replicated;
  let admin: string;
  beforeAll(async () => {
    sentinel = await startRedisSentinel();
    deployment = await startReplicas(2, { env: { REDIS_SENTINELS: sentinel.sentinels, REDIS_SENTINEL_MASTER: sentinel.master } });
    admin = await token('ADMIN', 'user-0000');
  });
  afterAll(async () => {
    await deployment?.stop();
    await sentinel?.close();
  });

  it('keeps answering through a failover, after which replicas share state and events through the new primary', { timeout: 180_000 }, async () => {
    const [a, b] = [deployment.replicas[0]!.url, deployment.replicas[1]!.url];
    await expectSharedPersistedQueries(a, b, 13);
    const before = await sentinel.primaryPort();

    let traffic = true;
    const outcomes: number[] = [];
    const load = (async () => {
      for (let i = 0; traffic; i++) {
        const response = await graphql([a, b][i % 2]!, productQuery(14 + (i % 5)), i % 3 === 0 ? { token: admin } : {});
        outcomes.push(response.body.errors ? 0 : response.status);
      }
    })();
    await waitFor(() => outcomes.length > 5, 'traffic before the failover');
    const beforeFailover = outcomes.length;
    await sentinel.failover();
    // Requests go on while the clients move to the new primary: commands that fail are cache misses, not errors.
    expect(outcomes.length).toBeGreaterThan(beforeFailover);
    const afterFailover = outcomes.length;
    await waitFor(() => outcomes.length > afterFailover + 20, 'traffic after the failover');
    traffic = false;
    await load;

    expect(await sentinel.primaryPort()).not.toBe(before);
    expect(outcomes.filter((status) => status !== 200)).toEqual([]);
    // Generous: on a loaded machine the clients' reconnections (capped backoff, asking the sentinels anew) have been seen
    // to take over 20 s; a failure names what each /readyz said last.
    const readyz = async (url: string) => {
      const response = await fetch(url.replace('/graphql', '/readyz'));
      return { status: response.status, body: await response.text() };
    };
    for (const [name, url] of [['A', a], ['B', b]] as const) {
      await waitFor(async () => (await readyz(url)).status === 200, `gateway ${name} ready on the new primary`, 60_000).catch(async (error: Error) => {
        throw new Error(`${error.message}: /readyz said ${JSON.stringify(await readyz(url))}`);
      });
    }
    await expectSharedPersistedQueries(b, a, 19);
    await expectSharedEvents(deployment, admin);
  });
});

describe('a Sentinel-watched primary that hangs', () => {
  let sentinel: TestSentinel;
  beforeAll(async () => {
    sentinel = await startRedisSentinel();
  });
  afterAll(() => sentinel?.close());

  it('is left for the new primary: it closes nothing and answers nothing, and the connection moves once PINGs go unanswered', { timeout: 120_000 }, async () => {
    // The processes' own connection factory, as the gateway and orders make theirs.
    const target = redisTarget({ REDIS_SENTINELS: sentinel.sentinels, REDIS_SENTINEL_MASTER: sentinel.master, REDIS_TLS: false });
    const redis = createRedis(target!, createLogger('test', 'silent'));
    try {
      await redis.set('before', '1');
      // Replication is asynchronous: the write must reach the replica before its primary stops (WAIT for 1 replica).
      await redis.wait(1, 5_000);
      await sentinel.failover({ hang: true });
      // Without the watchdog the connection stays on the stopped primary and every command times out for good.
      await waitFor(async () => (await redis.set('after', '1').then(() => true, () => false)), 'a write to reach the new primary', 60_000);
      expect(await redis.get('before')).toBe('1');
    } finally {
      redis.disconnect();
    }
  });
});
