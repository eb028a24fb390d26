// The typed client example (examples/client) end to end: Apollo Client against the started supergraph with the
// gateway in allow-list mode, loaded with the manifest `npm run manifest` builds from the example's documents.
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runExample } from '@ordergraph/example-client';
import { REPO_ROOT } from '@ordergraph/composition';
import { graphql, readCounter, token, waitFor } from '@ordergraph/testkit';
import { startSupergraph, type Supergraph } from '@ordergraph/testkit/e2e';

const MANIFEST = resolve(REPO_ROOT, 'examples/client/persisted-query-manifest.json');
let supergraph: Supergraph;

beforeAll(async () => {
  supergraph = await startSupergraph({ gatewayEnv: { PERSISTED_QUERIES: 'allowlist', PERSISTED_QUERIES_MANIFEST: MANIFEST } });
});
afterAll(() => supergraph?.stop());

describe('the client example', () => {
  it('lists products, places an order and receives its status change, every operation from the manifest', async () => {
    const lines: string[] = [];
    const active = (url: string) => readCounter(url.replace(/\/graphql$/, '/metrics'), 'graphql_active_subscriptions');
    const result = await runExample({
      url: supergraph.url,
      token: await token('USER', 'user-0001'),
      log: (line) => lines.push(line),
      // Open on the orders subgraph too, not only at the gateway: a cancellation sent before orders listens is an event
      // nobody hears (delivery is at most once), and under load that gap is long enough to lose it.
      subscribed: () =>
        waitFor(async () => (await active(supergraph.url)) === 1 && (await active(supergraph.subgraphUrl('orders'))) === 1, 'the status subscription'),
    });
    expect(result.products).toHaveLength(3);
    expect(result.total).toBeGreaterThan(0);
    expect(result.statusChange).toEqual({ from: 'PENDING', to: 'CANCELLED' });
    expect(lines.at(-1)).toContain(`order ${result.orderId} is now CANCELLED`);
  });

  it('runs against a gateway that refuses any document not in the manifest', async () => {
    const { status, body } = await graphql(supergraph.url, '{ products(limit: 1) { id } }');
    expect(status).toBe(400);
    expect(body.errors?.[0]?.extensions?.['code']).toBe('PERSISTED_QUERY_NOT_ALLOWED');
  });
});
