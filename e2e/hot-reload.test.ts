// Independent deployment: the gateway picks up a newly composed supergraph from its file without a restart, while
// requests run, and requests already in flight finish on the supergraph they started on. The new supergraph adds a
// subgraph started by this test ("reviews", deployed in two versions like a team shipping a new field), composed
// with the real three from supergraph.yaml.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginInlineTraceDisabled } from '@apollo/server/plugin/disabled';
import { startStandaloneServer } from '@apollo/server/standalone';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { parse } from 'graphql';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { toGlobalId } from '@ordergraph/core';
import { composeSupergraph, readSupergraphConfig, writeSupergraph } from '@ordergraph/composition';
import { graphql, readCounter, sseClient, subscribe, token, waitFor, wsClient, type GraphQLResponse } from '@ordergraph/testkit';
import { startSupergraph, type Supergraph } from '@ordergraph/testkit/e2e';

const productId = toGlobalId('Product', 'product-0001');
/** Bounds for waiting on progress, generous for a busy machine; nothing asserts on how long anything took. */
const PATIENCE = { timeout: 20_000 };
const aliceId = toGlobalId('User', 'user-0001');

/** A release of the reviews subgraph; version 2 adds Product.ratingCount. `rateProduct` waits for `gate`, but for a one-star probe. */
async function startReviews(version: 1 | 2, gate: Promise<void> = Promise.resolve()) {
  const typeDefs = `
    extend schema @link(url: "https://specs.apollo.dev/federation/v2.7", import: ["@key"])
    type Product @key(fields: "id") {
      id: ID!
      rating: Float
      ${version === 2 ? 'ratingCount: Int!' : ''}
    }
    type Mutation { rateProduct(id: ID!, stars: Int!): Product! }
  `;
  let started = 0;
  let probed = 0;
  const product = (id: string) => ({ id, rating: 4.5, ratingCount: 2 });
  const server = new ApolloServer({
    schema: buildSubgraphSchema([
      {
        typeDefs: parse(typeDefs),
        resolvers: {
          Product: { __resolveReference: ({ id }: { id: string }) => product(id) },
          Mutation: {
            rateProduct: async (_: unknown, { id, stars }: { id: string; stars: number }) => {
              // One star is a probe: it tells the test that this release is live, and never waits.
              if (stars === 1) {
                probed++;
                return product(id);
              }
              started++;
              await gate;
              return product(id);
            },
          },
        },
      },
    ]),
    plugins: [ApolloServerPluginInlineTraceDisabled()],
  });
  const { url } = await startStandaloneServer(server, { listen: { port: 0, host: '127.0.0.1' } });
  return { typeDefs, url, stop: () => server.stop(), started: () => started, probed: () => probed };
}

let supergraph: Supergraph;
let dir: string;
let file: string;
let alice: string;
let admin: string;
const stops: (() => Promise<void>)[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ordergraph-reload-'));
  file = join(dir, 'supergraph.graphql');
  // A short poll interval keeps the test quick; deployments use the 10 s default.
  supergraph = await startSupergraph({ supergraphFile: file, gatewayEnv: { SUPERGRAPH_POLL_INTERVAL: '50' } });
  alice = await token('USER', 'user-0001');
  admin = await token('ADMIN', 'user-0000');
});
afterAll(async () => {
  await supergraph?.stop();
  for (const stop of stops) await stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Composes the three subgraphs of supergraph.yaml plus a reviews release and replaces the gateway's file. */
function deploy(reviews: { typeDefs: string; url: string }) {
  const subgraphs = [...readSupergraphConfig(), { name: 'reviews', url: reviews.url, schemaPath: '(test)', typeDefs: reviews.typeDefs }];
  writeSupergraph(file, composeSupergraph(subgraphs, { ...supergraph.subgraphs, reviews: reviews.url }));
}

/** Asks for `field` until the gateway answers it without errors (the new supergraph is live). */
async function waitUntilQueryable(field: string) {
  await vi.waitFor(
    async () => {
      const { body } = await graphql(supergraph.url, `query ($id: ID!) { product(id: $id) { ${field} } }`, { variables: { id: productId } });
      expect(body.errors).toBeUndefined();
    },
    { ...PATIENCE, interval: 25 },
  );
}

/** Probes until a release is live: another with the same fields may be (a previous test's). */
async function waitUntilLive(release: { probed(): number }) {
  await vi.waitFor(
    async () => {
      await graphql(supergraph.url, `mutation ($id: ID!) { rateProduct(id: $id, stars: 1) { id } }`, { variables: { id: productId }, token: alice });
      expect(release.probed()).toBeGreaterThan(0);
    },
    { ...PATIENCE, interval: 25 },
  );
}

/** Sends a mix of queries and mutations across all subgraphs until stopped; returns every response that failed. */
function runLoad() {
  let running = true;
  let sent = 0;
  const failures: GraphQLResponse['body'][] = [];
  const requests = [
    () => graphql(supergraph.url, `query ($id: ID!) { product(id: $id) { id name price } }`, { variables: { id: productId } }),
    () => graphql(supergraph.url, `query ($id: ID!) { user(id: $id) { name orders(limit: 2) { id total items { product { name } } } } }`, { variables: { id: aliceId }, token: alice }),
    () =>
      graphql(supergraph.url, `mutation ($input: CreateOrderInput!) { createOrder(input: $input) { id total user { id } } }`, {
        variables: { input: { items: [{ productId, quantity: 1 }] } },
        token: alice,
      }),
  ];
  const loop = async (offset: number) => {
    for (let i = offset; running; i++) {
      const { status, body } = await requests[i % requests.length]!();
      sent++;
      if (status !== 200 || body.errors) failures.push(body);
    }
  };
  const loops = [loop(0), loop(1)];
  return {
    sent: () => sent,
    async stop() {
      running = false;
      await Promise.all(loops);
      return failures;
    },
  };
}

describe('supergraph hot reload', () => {
  it('serves a newly composed supergraph with an added field, without a restart and with no request failing', async () => {
    const before = await graphql(supergraph.url, `query ($id: ID!) { product(id: $id) { rating } }`, { variables: { id: productId } });
    expect(before.body.errors?.[0]?.extensions?.['code']).toBe('GRAPHQL_VALIDATION_FAILED');

    const reviews = await startReviews(1);
    stops.push(reviews.stop);
    const load = runLoad();
    await vi.waitFor(() => expect(load.sent()).toBeGreaterThan(10), PATIENCE);
    deploy(reviews);
    await waitUntilQueryable('name rating');
    const sentAtSwitch = load.sent();
    await vi.waitFor(() => expect(load.sent()).toBeGreaterThan(sentAtSwitch + 10), PATIENCE);
    expect(await load.stop()).toEqual([]);

    const { body } = await graphql(supergraph.url, `query ($id: ID!) { product(id: $id) { id name rating } }`, { variables: { id: productId } });
    expect(body).toEqual({ data: { product: { id: productId, name: expect.any(String), rating: 4.5 } } });
  });

  it('lets mutations in flight during a reload finish on the supergraph they started on', async () => {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const v1 = await startReviews(1, gate);
    stops.push(v1.stop);
    deploy(v1);
    await waitUntilLive(v1);

    // Three mutations start and wait inside reviews v1.
    const RATE = `mutation ($id: ID!) { rateProduct(id: $id, stars: 5) { id name rating } }`;
    const inFlight = Array.from({ length: 3 }, () => graphql(supergraph.url, RATE, { variables: { id: productId }, token: alice }));
    await vi.waitFor(() => expect(v1.started()).toBe(3), PATIENCE);

    // Reviews v2 ships Product.ratingCount; the gateway switches to it while the three are still running.
    const v2 = await startReviews(2);
    stops.push(v2.stop);
    deploy(v2);
    await waitUntilQueryable('rating ratingCount');

    open();
    for (const { status, body } of await Promise.all(inFlight)) {
      expect(status).toBe(200);
      expect(body).toEqual({ data: { rateProduct: { id: productId, name: expect.any(String), rating: 4.5 } } });
    }
  });

  it('ends subscriptions open across a reload with SUBSCRIPTION_SCHEMA_RELOAD, over graphql-ws and SSE; subscribed again, they get events', async () => {
    const active = (url: string) => readCounter(url.replace(/\/graphql$/, '/metrics'), 'graphql_active_subscriptions');
    const ordersUrl = supergraph.subgraphUrl('orders');
    // The two subscribers share one upstream stream (same operation, both administrators).
    const open = async (expected: number) => {
      const upstream = Math.min(expected, 1);
      await waitFor(async () => (await active(supergraph.url)) === expected && (await active(ordersUrl)) === upstream, `${expected} open subscriptions`);
    };
    const NEW_ORDER = 'subscription { newOrderCreated { id items { product { name } } } }';
    const clients = [wsClient(supergraph.url, { token: admin }), sseClient(supergraph.url, { token: admin })];
    try {
      const before = clients.map((client) => subscribe(client, NEW_ORDER));
      await open(2);

      const reviews = await startReviews(2);
      stops.push(reviews.stop);
      deploy(reviews);
      // The gateway reads its file again when a request comes after the poll interval.
      await waitUntilLive(reviews);
      for (const stream of before) {
        // One last result that says why, then the stream completes (it does not fail: the client decides).
        expect(await stream.ended).toBeUndefined();
        expect(stream.results).toEqual([
          { errors: [{ message: 'The gateway switched to a new supergraph; subscribe again', extensions: { code: 'SUBSCRIPTION_SCHEMA_RELOAD' } }] },
        ]);
      }
      // Nothing stays open upstream on the previous supergraph's connections.
      await open(0);

      const after = clients.map((client) => subscribe(client, NEW_ORDER));
      await open(2);
      const created = await graphql(supergraph.url, `mutation ($input: CreateOrderInput!) { createOrder(input: $input) { id } }`, {
        variables: { input: { items: [{ productId, quantity: 1 }] } },
        token: alice,
      });
      const { id } = created.body.data!['createOrder'] as { id: string };
      for (const stream of after) {
        const [event] = await stream.received(1);
        expect(event!.data!['newOrderCreated']).toEqual({ id, items: [{ product: { name: expect.any(String) } }] });
        await stream.close();
      }
    } finally {
      for (const client of clients) await client.dispose();
    }
  });
});
