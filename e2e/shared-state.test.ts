// The gateway's Redis: /readyz reports it, and while it is down requests are still answered (rate limits count in
// memory, persisted queries and cached responses read as misses) until it comes back.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { toGlobalId } from '@ordergraph/core';
import { graphql } from '@ordergraph/testkit';
import { startSupergraph, type Supergraph } from '@ordergraph/testkit/e2e';

let supergraph: Supergraph;

beforeAll(async () => {
  supergraph = await startSupergraph({ redis: true });
});
afterAll(() => supergraph?.stop());

const readyz = async () => (await fetch(supergraph.url.replace('/graphql', '/readyz'))).status;

/** Polls (a bounded number of times) until the readiness status is the expected one. */
async function readinessBecomes(status: number): Promise<number> {
  let current = await readyz();
  for (let attempt = 0; attempt < 100 && current !== status; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    current = await readyz();
  }
  return current;
}

it('/readyz follows Redis, and requests are answered while it is down', async () => {
  expect(await readyz()).toBe(200);
  const redis = supergraph.redis!;
  await redis.stop();
  try {
    expect(await readinessBecomes(503)).toBe(503);
    const query = `{ product(id: "${toGlobalId('Product', 'product-0009')}") { name currentPrice } }`;
    const response = await graphql(supergraph.url, query);
    expect(response.status).toBe(200);
    expect(response.body.data!.product.name).toEqual(expect.any(String));
    // A hash cannot be looked up: the client is told to send the query, which then runs.
    const hash = createHash('sha256').update(query).digest('hex');
    const persisted = await fetch(supergraph.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query, extensions: { persistedQuery: { version: 1, sha256Hash: hash } } }),
    });
    expect(persisted.status).toBe(200);
    expect((await persisted.json()).data.product.name).toEqual(expect.any(String));
  } finally {
    await redis.start();
  }
  expect(await readinessBecomes(200)).toBe(200);
});
