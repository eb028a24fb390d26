// The entity cache in a trace, as an operator's collector sees it: the gateway (a real process exporting OTLP) marks
// the span of each subgraph call the cache looked at with its hits and misses.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { toGlobalId } from '@ordergraph/core';
import { graphql, startOtlpReceiver, startRedis, token, waitFor, type OtlpReceiver, type TestRedis } from '@ordergraph/testkit';
import { startProcessSupergraph, type ProcessSupergraph } from '@ordergraph/testkit/e2e';

let receiver: OtlpReceiver;
let redis: TestRedis;
let supergraph: ProcessSupergraph;

beforeAll(async () => {
  [receiver, redis] = await Promise.all([startOtlpReceiver(), startRedis()]);
  supergraph = await startProcessSupergraph({
    env: { REDIS_URL: redis.url, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '100', OTEL_TRACES_SAMPLER: 'parentbased_always_on' },
    envOf: { gateway: { ENTITY_CACHE: 'on' } },
  });
}, 300_000);
afterAll(async () => {
  await supergraph?.stop();
  await Promise.all([receiver?.close(), redis?.close()]);
});

it("marks a subgraph call's span with the entity cache's hits and misses", async () => {
  const query = `query CachedProduct { product(id: "${toGlobalId('Product', 'product-0021')}") { name } }`;
  // Signed in, so that the response cache (anonymous callers only) leaves it to the entity cache.
  const admin = await token('ADMIN', 'user-0000');
  // The first request meets no epoch yet (a fresh Redis), the second fills the cache, the third hits.
  for (let i = 0; i < 3; i++) expect((await graphql(supergraph.url, query, { token: admin })).body.errors).toBeUndefined();
  const marked = () => receiver.spans.filter((span) => span.service === 'gateway' && 'ordergraph.entity_cache.hits' in span.attributes);
  await waitFor(() => marked().some((span) => span.attributes['ordergraph.entity_cache.hits'] === 1), 'a span marked with a hit');
  expect(marked().some((span) => span.attributes['ordergraph.entity_cache.misses'] === 1)).toBe(true);
});
