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
import { graphql, token, type GraphQLResponse } from '@ordergraph/testkit';
import { startSupergraph, type Supergraph } from '@ordergraph/testkit/e2e';

const productId = toGlobalId('Product', 'product-0001');
/** Bounds for waiting on progress, generous for a busy machine; nothing asserts on how long anything took. */
const PATIENCE = { timeout: 20_000 };
const aliceId = toGlobalId('User', 'user-0001');

/** A release of the reviews subgraph; version 2 adds Product.ratingCount. `rateProduct` waits for `gate`. */
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
  const product = (id: string) => ({ id, rating: 4.5, ratingCount: 2 });
  const server = new ApolloServer({
    schema: buildSubgraphSchema([
      {
        typeDefs: parse(typeDefs),
        resolvers: {
          Product: { __resolveReference: ({ id }: { id: string }) => product(id) },
          Mutation: {
            rateProduct: async (_: unknown, { id }: { id: string }) => {
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
  return { typeDefs, url, stop: () => server.stop(), started: () => started };
}

let supergraph: Supergraph;
let dir: string;
let file: string;
let alice: string;
const stops: (() => Promise<void>)[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ordergraph-reload-'));
  file = join(dir, 'supergraph.graphql');
  // A short poll interval keeps the test quick; deployments use the 10 s default.
  supergraph = await startSupergraph({ supergraphFile: file, gatewayEnv: { SUPERGRAPH_POLL_INTERVAL: '50' } });
  alice = await token('USER', 'user-0001');
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
    await waitUntilQueryable('rating');

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
});
