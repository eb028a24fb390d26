// The errors a subgraph answers for some of the entities it resolves land at each entity's own path, list indices
// included. The router-runtime patch finds those paths again only when a subgraph answers errors
// (docs/dependency-pins.md); this asks for them through a subgraph of the test's own ("ratings") that refuses the
// rating of some products, composed with the real three. (The JavaScript planner is no reference here: it places such errors at other paths.)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginInlineTraceDisabled } from '@apollo/server/plugin/disabled';
import { startStandaloneServer } from '@apollo/server/standalone';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { GraphQLError, parse } from 'graphql';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { composeSupergraph, readSupergraphConfig, writeSupergraph } from '@ordergraph/composition';
import { toGlobalId } from '@ordergraph/core';
import { graphql, token, waitFor } from '@ordergraph/testkit';
import { startSupergraph, type Supergraph } from '@ordergraph/testkit/e2e';

const TYPE_DEFS = `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.7", import: ["@key"])
  type Product @key(fields: "id") { id: ID! rating: Int }
`;

/** A rating for products whose ID's character codes add up to an even number, NO_RATING for the others. */
const ratings = new ApolloServer({
  schema: buildSubgraphSchema([
    {
      typeDefs: parse(TYPE_DEFS),
      resolvers: {
        Product: {
          __resolveReference: (reference: { id: string }) => reference,
          rating: ({ id }: { id: string }) => {
            if ([...id].reduce((sum, character) => sum + character.charCodeAt(0), 0) % 2 === 1) throw new GraphQLError(`no rating for ${id}`, { extensions: { code: 'NO_RATING' } });
            return id.length;
          },
        },
      },
    },
  ]),
  plugins: [ApolloServerPluginInlineTraceDisabled()],
});

let supergraph: Supergraph;
let dir: string;
let admin: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ordergraph-planner-errors-'));
  const { url } = await startStandaloneServer(ratings, { listen: { port: 0, host: '127.0.0.1' } });
  const file = join(dir, 'supergraph.graphql');
  supergraph = await startSupergraph({ supergraphFile: file, gatewayEnv: { SUPERGRAPH_POLL_INTERVAL: '50' } });
  const subgraphs = [...readSupergraphConfig(), { name: 'ratings', url, schemaPath: '(test)', typeDefs: TYPE_DEFS }];
  writeSupergraph(file, composeSupergraph(subgraphs, { ...supergraph.subgraphs, ratings: url }));
  admin = await token('ADMIN', 'user-0000');
  await waitFor(async () => (await graphql(supergraph.url, '{ products(limit: 1) { rating } }', { token: admin })).body.data !== undefined, 'the ratings subgraph composed in');
});
afterAll(async () => {
  await supergraph?.stop();
  await ratings.stop().catch(() => undefined); // not started if the supergraphs failed to
  rmSync(dir, { recursive: true, force: true });
});

const inOrder = (paths: readonly (readonly (string | number)[] | undefined)[]) => paths.map((path) => JSON.stringify(path)).sort();

it("places a subgraph's errors for some of its entities at each entity's path", async () => {
  const query = `query ($id: ID!) { user(id: $id) { orders(limit: 5) { id items { quantity product { id name rating } } } } }`;
  const { body } = await graphql(supergraph.url, query, { variables: { id: toGlobalId('User', 'user-0001') }, token: admin });
  // Each refused rating is null, with one error at its own path; each other rating is there.
  type Orders = { user: { orders: { items: { product: { id: string; name: string; rating: number | null } }[] }[] } };
  const refused: (string | number)[][] = [];
  let refusedProduct: string | undefined;
  let rated = 0;
  (body.data as Orders).user.orders.forEach((order, o) =>
    order.items.forEach(({ product }, i) => {
      expect(product.name).toEqual(expect.any(String));
      if (product.rating === null) {
        refused.push(['user', 'orders', o, 'items', i, 'product', 'rating']);
        refusedProduct ??= product.id;
      } else rated++;
    }),
  );
  expect(refused.length).toBeGreaterThan(1);
  expect(rated).toBeGreaterThan(0);
  expect(inOrder((body.errors ?? []).map((error) => error.path))).toEqual(inOrder(refused));

  // One product at two paths is asked for once: its error lands on both.
  const twice = await graphql(supergraph.url, `query ($id: ID!) { a: product(id: $id) { rating } b: product(id: $id) { rating } }`, { variables: { id: refusedProduct }, token: admin });
  expect(twice.body.data).toEqual({ a: { rating: null }, b: { rating: null } });
  expect(inOrder((twice.body.errors ?? []).map((error) => error.path))).toEqual(inOrder([['a', 'rating'], ['b', 'rating']]));
});
