// A deploy without a cold plan cache: when the gateway picks up a newly composed supergraph, it plans the operations
// most used before the reload on it before it serves (docs/warm-reload.md). Seen through the gateway's own counters
// (plan cache hits and misses, operations warmed) and its log line, never through timings. The new supergraph drops
// Product.imageUrl from catalog's schema, a deployment that removes a field an operation in use still asks for.
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toGlobalId } from '@ordergraph/core';
import { composeSupergraph, readSupergraphConfig, writeSupergraph } from '@ordergraph/composition';
import { graphql, readCounter, token, waitFor } from '@ordergraph/testkit';
import { startSupergraph, type Supergraph } from '@ordergraph/testkit/e2e';

const productId = toGlobalId('Product', 'product-0001');
const NAME = 'query ProductName($id: ID!) { product(id: $id) { id name } }';
const PRICES = 'query ProductPrices($id: ID!) { product(id: $id) { price currentPrice } }';
const IMAGE = 'query ProductImage($id: ID!) { product(id: $id) { imageUrl } }';
/** Sent by its hash once registered (automatic persisted queries): it executes as the document it stands for. */
const PERSISTED = 'query ProductPersisted($id: ID!) { product(id: $id) { id price } }';
const WARMED = 'query plans warmed on the new supergraph before it serves';

interface Started {
  supergraph: Supergraph;
  /** A signed-in user: the shared response cache answers no one signed in, so every request below is executed. */
  bearer: string;
  file: string;
  dir: string;
  logs: string[];
}

async function start(gatewayEnv: Record<string, string>): Promise<Started> {
  const dir = mkdtempSync(join(tmpdir(), 'ordergraph-warm-'));
  const file = join(dir, 'supergraph.graphql');
  const logs: string[] = [];
  // A short poll interval keeps the test quick; deployments use the 10 s default.
  const supergraph = await startSupergraph({
    supergraphFile: file,
    env: { LOG_LEVEL: 'info' },
    logs: { write: (line: string) => void logs.push(line) },
    gatewayEnv: { SUPERGRAPH_POLL_INTERVAL: '50', ...gatewayEnv },
  });
  return { supergraph, file, dir, logs, bearer: await token('USER', 'user-0001') };
}

async function stop(started: Started | undefined) {
  await started?.supergraph.stop();
  if (started) rmSync(started.dir, { recursive: true, force: true });
}

/** The three subgraphs of supergraph.yaml, catalog's Product without imageUrl, replacing the gateway's file. */
function deployWithoutImageUrl({ supergraph, file }: Started) {
  const subgraphs = readSupergraphConfig().map((subgraph) => {
    if (subgraph.name !== 'catalog') return subgraph;
    const typeDefs = subgraph.typeDefs.replace('  imageUrl: URL\n  attributes: JSON\n  createdAt: DateTime!', '  attributes: JSON\n  createdAt: DateTime!');
    expect(typeDefs).not.toBe(subgraph.typeDefs);
    return { ...subgraph, typeDefs };
  });
  writeSupergraph(file, composeSupergraph(subgraphs, supergraph.subgraphs));
}

const metrics = ({ supergraph }: Started) => supergraph.url.replace(/\/graphql$/, '/metrics');
const planCache = async (started: Started) => ({
  hit: await readCounter(metrics(started), 'gateway_query_plan_cache_total', { result: 'hit' }),
  miss: await readCounter(metrics(started), 'gateway_query_plan_cache_total', { result: 'miss' }),
});
const warmed = (started: Started, outcome: string) => readCounter(metrics(started), 'gateway_supergraph_warmup_operations_total', { outcome });

async function ask(started: Started, query: string) {
  const { status, body } = await graphql(started.supergraph.url, query, { variables: { id: productId }, token: started.bearer });
  return { status, body };
}

/** PERSISTED by its hash alone, or with its text (which registers it). */
async function askPersisted(started: Started, withText: boolean) {
  const response = await fetch(started.supergraph.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${started.bearer}` },
    body: JSON.stringify({
      ...(withText ? { query: PERSISTED } : {}),
      variables: { id: productId },
      extensions: { persistedQuery: { version: 1, sha256Hash: createHash('sha256').update(PERSISTED).digest('hex') } },
    }),
  });
  return (await response.json()) as { data?: unknown; errors?: unknown[] };
}

/** Uses each operation: PERSISTED (registered, then by its hash), NAME three times, PRICES twice, IMAGE once. */
async function useOperations(started: Started) {
  expect((await askPersisted(started, true)).errors).toBeUndefined();
  expect(await askPersisted(started, false)).toEqual({ data: { product: { id: productId, price: expect.any(Number) } } });
  for (const [query, times] of [[NAME, 3], [PRICES, 2], [IMAGE, 1]] as const) {
    for (let i = 0; i < times; i++) {
      const { body } = await ask(started, query);
      expect(body.errors).toBeUndefined();
    }
  }
}

/** Whether the gateway answers IMAGE as invalid: the supergraph without imageUrl is the one it serves. */
const servesWithoutImageUrl = async (started: Started) => (await ask(started, IMAGE)).body.errors?.[0]?.extensions?.['code'] === 'GRAPHQL_VALIDATION_FAILED';

describe('warm-up of a reloaded supergraph (SUPERGRAPH_WARMUP_OPERATIONS=100)', () => {
  let started: Started;
  beforeAll(async () => {
    started = await start({ SUPERGRAPH_WARMUP_OPERATIONS: '100' });
  });
  afterAll(() => stop(started));

  it('plans the operations used before the reload on the new supergraph before it serves, persisted ones included, skipping one it no longer validates', async () => {
    const before = await planCache(started);
    await useOperations(started);
    // Each operation planned once, on its first use; every later use found its plan.
    expect(await planCache(started)).toEqual({ hit: before.hit + 4, miss: before.miss + 4 });

    deployWithoutImageUrl(started);
    // The gateway reads its file when a request comes after the poll interval: `{ __typename }` is answered from the
    // schema, without a plan, so it moves no plan counter.
    await waitFor(async () => {
      await ask(started, '{ __typename }');
      return (await warmed(started, 'planned')) > 0;
    }, 'the warm-up of the new supergraph');
    expect(await warmed(started, 'planned')).toBe(3);
    expect(await warmed(started, 'invalid')).toBe(1);
    expect(await warmed(started, 'failed')).toBe(0);
    expect(await warmed(started, 'unfinished')).toBe(0);

    // The first request of an operation used before the reload finds its plan on the new supergraph.
    const cache = await planCache(started);
    const { body } = await ask(started, NAME);
    expect(body).toEqual({ data: { product: { id: productId, name: expect.any(String) } } });
    expect(await planCache(started)).toEqual({ hit: cache.hit + 1, miss: cache.miss });
    await ask(started, PRICES);
    // The persisted query too, sent by its hash alone.
    expect(await askPersisted(started, false)).toEqual({ data: { product: { id: productId, price: expect.any(Number) } } });
    expect(await planCache(started)).toEqual({ hit: cache.hit + 3, miss: cache.miss });

    // The operation the new supergraph no longer serves was skipped, not failed: it is refused by validation as any
    // other invalid operation is, and was never planned.
    expect(await servesWithoutImageUrl(started)).toBe(true);
    expect(await planCache(started)).toEqual({ hit: cache.hit + 3, miss: cache.miss });

    const line = started.logs
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((text) => JSON.parse(text) as { msg: string; service: string; warmup?: Record<string, number> })
      .find((entry) => entry.msg === WARMED);
    expect(line).toMatchObject({ service: 'gateway', warmup: { planned: 3, invalid: 1, failed: 0, unfinished: 0, operations: 4, limit: 100, durationMs: expect.any(Number), plansMs: expect.any(Number), subgraphsMs: expect.any(Number) } });
  });
});

describe('warm-up turned off (SUPERGRAPH_WARMUP_OPERATIONS=0)', () => {
  let started: Started;
  beforeAll(async () => {
    started = await start({ SUPERGRAPH_WARMUP_OPERATIONS: '0' });
  });
  afterAll(() => stop(started));

  it('plans nothing on the new supergraph: the first request of an operation used before the reload misses', async () => {
    await useOperations(started);
    deployWithoutImageUrl(started);
    await waitFor(() => servesWithoutImageUrl(started), 'the new supergraph served');

    const cache = await planCache(started);
    const { body } = await ask(started, NAME);
    expect(body.errors).toBeUndefined();
    expect(await planCache(started)).toEqual({ hit: cache.hit, miss: cache.miss + 1 });
    expect(await warmed(started, 'planned')).toBe(0);
    expect(started.logs.join('')).not.toContain(WARMED);
  });
});
