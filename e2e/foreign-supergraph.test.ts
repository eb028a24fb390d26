// The gateway serving a supergraph that is not ours: two subgraphs of the test's own (inventory, reviews) composed
// alone, as any team's supergraph would be. Their routing URLs come from SUBGRAPH_<NAME>_URL by the names the served
// supergraph gives them, hot reload included; the errors they answer without a code of ours keep their message or are
// masked as INCLUDE_SUBGRAPH_ERRORS says, their code and path the same either way.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginInlineTraceDisabled } from '@apollo/server/plugin/disabled';
import { startStandaloneServer } from '@apollo/server/standalone';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { GraphQLError, parse } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { composeSupergraph, writeSupergraph, type SubgraphSource } from '@ordergraph/composition';
import { createLogger } from '@ordergraph/core';
import { createGateway, type Gateway } from '@ordergraph/gateway';
import { loadGatewayConfig } from '@ordergraph/gateway/config';
import { supergraphFile } from '@ordergraph/gateway/supergraph-source';
import { freePort, graphql, waitFor } from '@ordergraph/testkit';

const FEDERATION = `extend schema @link(url: "https://specs.apollo.dev/federation/v2.7", import: ["@key"])`;
const INVENTORY = `${FEDERATION}
  type Query { stock(sku: ID!): Stock }
  type Stock @key(fields: "sku") { sku: ID! count: Int missing: Int }`;
const REVIEWS = `${FEDERATION}
  type Stock @key(fields: "sku") { sku: ID! rating: Int verdict: String }`;

const MISDIRECTED = "You should be using the 'a' subgraph!";
const UNOPINIONATED = 'The reviews subgraph has no opinion on this';

/** A subgraph's schema: plain Errors for the failures of its own, a coded GraphQLError for a deliberate refusal. */
const subgraph = (typeDefs: string, resolvers: Record<string, Record<string, unknown>>) =>
  new ApolloServer({ schema: buildSubgraphSchema([{ typeDefs: parse(typeDefs), resolvers: resolvers as never }]), plugins: [ApolloServerPluginInlineTraceDisabled()] });

const inventory = subgraph(INVENTORY, {
  Query: { stock: (_: unknown, { sku }: { sku: string }) => ({ sku }) },
  Stock: {
    count: () => {
      throw new Error(MISDIRECTED);
    },
    missing: ({ sku }: { sku: string }) => {
      throw new GraphQLError(`Stock with id ${sku} not found`, { extensions: { code: 'NOT_FOUND' } });
    },
  },
});
const reviews = subgraph(REVIEWS, {
  Stock: {
    __resolveReference: (reference: { sku: string }) => reference,
    rating: () => 4,
    verdict: () => {
      throw new Error(UNOPINIONATED);
    },
  },
});

let urls: { inventory: string; reviews: string };
/** Where no subgraph listens: the routing URL composed into the supergraph, which only an override gets past. */
let nowhere: string;
let dir: string;
const gateways: Gateway[] = [];

const source = (name: string, typeDefs: string): SubgraphSource => ({ name, url: nowhere, schemaPath: '(test)', typeDefs });
const inventoryOnly = () => composeSupergraph([source('inventory', INVENTORY)]);
const both = () => composeSupergraph([source('inventory', INVENTORY), source('reviews', REVIEWS)]);

/** A gateway on `supergraph` with `env`; the development defaults unless env says production. */
async function gateway(env: Record<string, string>, supergraph: string | (() => string) = both()): Promise<string> {
  const production = env['NODE_ENV'] === 'production' ? { JWT_SECRET: 's'.repeat(40), SUBGRAPH_SIGNING_SECRET: 'g'.repeat(40) } : {};
  const started = createGateway({ config: loadGatewayConfig({ LOG_LEVEL: 'silent', ...production, ...env }), supergraph, logger: createLogger('gateway', 'silent') });
  gateways.push(started);
  return started.listen(0, '127.0.0.1');
}
const routed = () => ({ SUBGRAPH_INVENTORY_URL: urls.inventory, SUBGRAPH_REVIEWS_URL: urls.reviews });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ordergraph-foreign-'));
  nowhere = `http://127.0.0.1:${await freePort()}/graphql`;
  const listen = { listen: { port: 0, host: '127.0.0.1' } };
  urls = { inventory: (await startStandaloneServer(inventory, listen)).url, reviews: (await startStandaloneServer(reviews, listen)).url };
});
afterAll(async () => {
  for (const started of gateways) await started.stop();
  await inventory.stop().catch(() => undefined); // not started if the other failed to
  await reviews.stop().catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
});

describe('SUBGRAPH_<NAME>_URL, by the names of the supergraph served', () => {
  it('routes a subgraph our supergraph.yaml does not list by its variable; without it, the composed URL fails', async () => {
    const query = `{ stock(sku: "lamp") { sku rating } }`;
    const routedGateway = await gateway(routed(), both());
    expect((await graphql(routedGateway, query)).body).toEqual({ data: { stock: { sku: 'lamp', rating: 4 } } });
    const unrouted = await gateway({}, both());
    const { body } = await graphql(unrouted, query);
    expect(body.data).toEqual({ stock: null });
    expect(body.errors).toEqual([expect.objectContaining({ path: ['stock'], extensions: { code: 'SUBGRAPH_UNAVAILABLE' } })]);
  });

  it('routes a subgraph a newly loaded supergraph brings by its variable, set before that subgraph existed', async () => {
    const file = join(dir, 'supergraph.graphql');
    writeSupergraph(file, inventoryOnly());
    const url = await gateway({ ...routed(), SUPERGRAPH_POLL_INTERVAL: '50' }, supergraphFile(file, createLogger('gateway', 'silent')));
    expect((await graphql(url, `{ stock(sku: "desk") { sku } }`)).body).toEqual({ data: { stock: { sku: 'desk' } } });
    writeSupergraph(file, both());
    await waitFor(async () => (await graphql(url, `{ stock(sku: "desk") { rating } }`)).body.data !== undefined, 'the reviews subgraph composed in');
    expect((await graphql(url, `{ stock(sku: "desk") { sku rating } }`)).body).toEqual({ data: { stock: { sku: 'desk', rating: 4 } } });
  });

  it('refuses to start on a malformed override, naming it, whether or not a subgraph of that name is served', () => {
    expect(() => loadGatewayConfig({ SUBGRAPH_INVENTORY_URL: 'inventory:4010' })).toThrow(/SUBGRAPH_INVENTORY_URL: must be an http\(s\) URL/);
    expect(() => loadGatewayConfig({ SUBGRAPH_WAREHOUSE_URL: 'not a URL' })).toThrow(/SUBGRAPH_WAREHOUSE_URL/);
  });
});

describe('INCLUDE_SUBGRAPH_ERRORS', () => {
  const QUERY = `{ stock(sku: "lamp") { sku count missing rating verdict } }`;
  const MASKED = 'Internal server error';
  /** The errors of QUERY as a client reads them, by path. */
  async function errorsOf(env: Record<string, string>) {
    const { status, body } = await graphql(await gateway({ ...routed(), ...env }), QUERY);
    expect(status).toBe(200);
    expect(body.data).toEqual({ stock: { sku: 'lamp', count: null, missing: null, rating: 4, verdict: null } });
    // No stack, cause or subgraph name in any mode: Apollo Server sends its stack trace outside production.
    expect(JSON.stringify(body)).not.toMatch(/stacktrace|serviceName|exception|\.ts:\d|node_modules/);
    return Object.fromEntries((body.errors ?? []).map(({ path, ...error }) => [path?.join('.'), error]));
  }
  /** Each failing field's error, the message being `count`'s and `verdict`'s as given; `missing` is NOT_FOUND always. */
  const expected = (count: string, verdict: string) => ({
    'stock.count': { message: count, extensions: { code: 'INTERNAL_SERVER_ERROR' } },
    'stock.missing': { message: 'Stock with id lamp not found', extensions: { code: 'NOT_FOUND' } },
    'stock.verdict': { message: verdict, extensions: { code: 'INTERNAL_SERVER_ERROR' } },
  });

  it("shows a subgraph's own message in development by default, code and path as when masked", async () => {
    expect(await errorsOf({})).toEqual(expected(MISDIRECTED, UNOPINIONATED));
  });

  it('masks it in production by default; a coded error still passes', async () => {
    expect(await errorsOf({ NODE_ENV: 'production' })).toEqual(expected(MASKED, MASKED));
  });

  it('follows INCLUDE_SUBGRAPH_ERRORS over the mode', async () => {
    expect(await errorsOf({ INCLUDE_SUBGRAPH_ERRORS: 'false' })).toEqual(expected(MASKED, MASKED));
    expect(await errorsOf({ NODE_ENV: 'production', INCLUDE_SUBGRAPH_ERRORS: 'true' })).toEqual(expected(MISDIRECTED, UNOPINIONATED));
  });

  it('does the same on the JavaScript planner, kept as a way back', async () => {
    expect(await errorsOf({ QUERY_PLANNER: 'js' })).toEqual(expected(MISDIRECTED, UNOPINIONATED));
    expect(await errorsOf({ QUERY_PLANNER: 'js', INCLUDE_SUBGRAPH_ERRORS_BY_SUBGRAPH: 'reviews=false' })).toEqual(expected(MISDIRECTED, MASKED));
  });

  it('lets a per-subgraph setting override the global one, both ways', async () => {
    expect(await errorsOf({ INCLUDE_SUBGRAPH_ERRORS_BY_SUBGRAPH: 'inventory=false' })).toEqual(expected(MASKED, UNOPINIONATED));
    expect(await errorsOf({ NODE_ENV: 'production', INCLUDE_SUBGRAPH_ERRORS_BY_SUBGRAPH: 'reviews=true' })).toEqual(expected(MASKED, UNOPINIONATED));
    expect(await errorsOf({ INCLUDE_SUBGRAPH_ERRORS: 'false', INCLUDE_SUBGRAPH_ERRORS_BY_SUBGRAPH: 'inventory=true,reviews=false' })).toEqual(expected(MISDIRECTED, MASKED));
  });
});
