// Progressive override through the gateway: shipping takes Order.eta from orders for percent(25) of the requests, and
// Order.note for the requests that turn the custom label `beta` on (a header, or a claim of the verified token). Two
// subgraphs of the test's own, each answering its own name, say which side served a field.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginInlineTraceDisabled } from '@apollo/server/plugin/disabled';
import { startStandaloneServer } from '@apollo/server/standalone';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { parse } from 'graphql';
import { createClient as createSseClient } from 'graphql-sse';
import { useServer } from 'graphql-ws/use/ws';
import { SignJWT } from 'jose';
import { WebSocketServer } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { composeSupergraph, writeSupergraph, type SubgraphSource } from '@ordergraph/composition';
import { DEV_JWT_SECRET, createLogger, toGlobalId } from '@ordergraph/core';
import { createGateway, type Gateway } from '@ordergraph/gateway';
import { loadGatewayConfig } from '@ordergraph/gateway/config';
import { supergraphFile } from '@ordergraph/gateway/supergraph-source';
import { graphql, stream } from '@ordergraph/testkit';

// @cacheControl as our subgraphs declare it, for the one field a test caches.
const FEDERATION = `extend schema @link(url: "https://specs.apollo.dev/federation/v2.7", import: ["@key", "@override", "@composeDirective"])
  @link(url: "https://ordergraph.dev/cache-control/v1.0", import: ["@cacheControl"])
  @composeDirective(name: "@cacheControl")
  enum CacheControlScope { PUBLIC PRIVATE }
  directive @cacheControl(maxAge: Int, scope: CacheControlScope, inheritMaxAge: Boolean) on FIELD_DEFINITION | OBJECT | INTERFACE | UNION`;
const ORDERS = `${FEDERATION}
  type Query { order(id: ID!): Order orders: [Order!]! cachedOrder(id: ID!): Order @cacheControl(maxAge: 60, scope: PUBLIC) }
  type Order @key(fields: "id") { id: ID! eta: String! note: String! }`;
const SHIPPING = `${FEDERATION}
  type Order @key(fields: "id") {
    id: ID!
    eta: String! @override(from: "orders", label: "percent(25)")
    note: String! @override(from: "orders", label: "beta")
  }`;

/** A subgraph whose every Order field but the id answers the subgraph's name. */
const subgraph = (name: string, typeDefs: string, query?: Record<string, unknown>) =>
  new ApolloServer({
    schema: buildSubgraphSchema([
      {
        typeDefs: parse(typeDefs),
        resolvers: {
          ...(query ? { Query: query } : {}),
          Order: { __resolveReference: (reference: { id: string }) => reference, eta: () => name, note: () => name },
        } as never,
      },
    ]),
    plugins: [ApolloServerPluginInlineTraceDisabled()],
  });

const orders = subgraph('orders', ORDERS, {
  order: (_: unknown, { id }: { id: string }) => ({ id }),
  cachedOrder: (_: unknown, { id }: { id: string }) => ({ id }),
  orders: () => [{ id: '1' }, { id: '2' }, { id: '3' }],
});
const shipping = subgraph('shipping', SHIPPING);

// Order ticks over graphql-ws, the transport the gateway subscribes to subgraphs with; note comes from orders or shipping.
const TICKER = `${FEDERATION}
  type Query { ticker: Boolean }
  type Subscription { orderTicked: Order! }
  type Order @key(fields: "id", resolvable: false) { id: ID! }`;
const tickerSchema = buildSubgraphSchema([
  {
    typeDefs: parse(TICKER),
    resolvers: {
      Query: { ticker: () => true },
      Subscription: {
        orderTicked: {
          subscribe: async function* () {
            for (;;) {
              yield { orderTicked: { id: '1' } };
              await new Promise((resolve) => setTimeout(resolve, 50));
            }
          },
        },
      },
    } as never,
  },
]);
let ticker: WebSocketServer;

let urls: { orders: string; shipping: string; ticker: string };
let supergraph: string;
const gateways: Gateway[] = [];

const source = (name: string, typeDefs: string): SubgraphSource => ({ name, url: `http://${name}.invalid/graphql`, schemaPath: '(test)', typeDefs });

async function gateway(env: Record<string, string> = {}, served: string | (() => string) = supergraph): Promise<string> {
  const config = loadGatewayConfig({ LOG_LEVEL: 'silent', SUBGRAPH_ORDERS_URL: urls.orders, SUBGRAPH_SHIPPING_URL: urls.shipping, SUBGRAPH_TICKER_URL: urls.ticker, RATE_LIMIT_MAX: '100000', ...env });
  const started = createGateway({ config, supergraph: served, logger: createLogger('gateway', 'silent') });
  gateways.push(started);
  return started.listen(0, '127.0.0.1');
}

/** Sends `count` requests, `parallel` at a time, and returns their bodies. */
async function send<T>(count: number, parallel: number, request: () => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  const worker = async () => {
    while (results.length < count) {
      const index = results.push(undefined as T) - 1;
      results[index] = await request();
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
  return results;
}

beforeAll(async () => {
  const listen = { listen: { port: 0, host: '127.0.0.1' } };
  ticker = new WebSocketServer({ port: 0, host: '127.0.0.1', path: '/graphql' });
  useServer({ schema: tickerSchema }, ticker);
  await new Promise((resolve) => ticker.once('listening', resolve));
  urls = {
    orders: (await startStandaloneServer(orders, listen)).url,
    shipping: (await startStandaloneServer(shipping, listen)).url,
    ticker: `http://127.0.0.1:${(ticker.address() as { port: number }).port}/graphql`,
  };
  supergraph = composeSupergraph([source('orders', ORDERS), source('shipping', SHIPPING), source('ticker', TICKER)]);
});
afterAll(async () => {
  for (const started of gateways) await started.stop();
  await orders.stop().catch(() => undefined);
  await shipping.stop().catch(() => undefined);
  await new Promise((resolve) => ticker.close(resolve));
});

describe('percent(n): one random value per request', () => {
  // The overridden field through two paths, and by an alias: one request's fetches all agree on one side.
  const QUERY = `{ order(id: "1") { id eta again: eta } orders { id eta } }`;
  interface Answer {
    order: { id: string; eta: string; again: string };
    orders: { id: string; eta: string }[];
  }

  it('sends 25 % ± 3 % of 2,000 requests to the overriding subgraph, every one complete and on one side', async () => {
    const url = await gateway();
    const bodies = await send(2000, 16, async () => (await graphql<Answer>(url, QUERY)).body);
    const failed = bodies.filter((body) => body.errors || !body.data);
    expect(failed.slice(0, 3)).toEqual([]);
    const sides = bodies.map(({ data }) => {
      const seen = new Set([data!.order.eta, data!.order.again, ...data!.orders.map((order) => order.eta)]);
      expect([...seen]).toHaveLength(1);
      expect(data!.orders.map((order) => order.id)).toEqual(['1', '2', '3']);
      return [...seen][0];
    });
    const share = sides.filter((side) => side === 'shipping').length / sides.length;
    expect(sides.every((side) => side === 'shipping' || side === 'orders')).toBe(true);
    expect(share).toBeGreaterThanOrEqual(0.22);
    expect(share).toBeLessThanOrEqual(0.28);
  }, 120_000);

  it('is not turned on by the header: the planner alone decides percent(n)', async () => {
    const url = await gateway({ OVERRIDE_LABELS_HEADER: 'x-override-labels' });
    const bodies = await send(400, 16, async () => (await graphql<Answer>(url, QUERY, { headers: { 'x-override-labels': 'percent(25)' } })).body);
    const share = bodies.filter(({ data }) => data?.order.eta === 'shipping').length / bodies.length;
    expect(share).toBeLessThan(0.4);
  }, 60_000);
});

describe('@defer, with labelled overrides in the supergraph', () => {
  it('is planned by the Rust planner and answered whole: complete, on one side, at the same split', async () => {
    const url = await gateway();
    const query = `{ order(id: "1") { id ... @defer { eta } } orders { id eta } }`;
    const answers = await send(400, 16, async () => {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'multipart/mixed;deferSpec=20220824,application/json;q=0.9' },
        body: JSON.stringify({ query }),
      });
      return (await response.json()) as { data?: { order: { eta: string }; orders: { eta: string }[] }; errors?: unknown[] };
    });
    expect(answers.filter((answer) => answer.errors || !answer.data)).toEqual([]);
    const sides = answers.map(({ data }) => new Set([data!.order.eta, ...data!.orders.map((order) => order.eta)]));
    expect(sides.filter((side) => side.size !== 1)).toEqual([]);
    const share = sides.filter((side) => side.has('shipping')).length / sides.length;
    expect(share).toBeGreaterThan(0.15);
    expect(share).toBeLessThan(0.35);
  }, 60_000);
});

describe('a custom label, turned on per request', () => {
  const QUERY = `{ order(id: "1") { note } orders { note } }`;
  const notes = (data: { order: { note: string }; orders: { note: string }[] } | null | undefined) => new Set([data?.order.note, ...(data?.orders.map((order) => order.note) ?? [])]);
  const shareOnShipping = async (url: string, options: Parameters<typeof graphql>[2]) => {
    const bodies = await send(200, 8, async () => (await graphql<{ order: { note: string }; orders: { note: string }[] }>(url, QUERY, options)).body);
    expect(bodies.filter((body) => body.errors)).toEqual([]);
    const sides = bodies.map(({ data }) => notes(data));
    expect(sides.every((side) => side.size === 1)).toBe(true);
    return sides.filter((side) => side.has('shipping')).length / sides.length;
  };

  it('by OVERRIDE_LABELS_HEADER: 100 % of the requests that send the label, 0 % of those that do not', async () => {
    const url = await gateway({ OVERRIDE_LABELS_HEADER: 'X-Override-Labels' });
    expect(await shareOnShipping(url, { headers: { 'x-override-labels': 'alpha, beta' } })).toBe(1);
    expect(await shareOnShipping(url, {})).toBe(0);
    expect(await shareOnShipping(url, { headers: { 'x-override-labels': 'gamma' } })).toBe(0);
  }, 60_000);

  it('by the header, never from or into the shared response cache', async () => {
    const url = await gateway({ OVERRIDE_LABELS_HEADER: 'x-override-labels' });
    const cached = `{ cachedOrder(id: "7") { note } }`;
    const note = async (headers: Record<string, string>) => (await graphql<{ cachedOrder: { note: string } }>(url, cached, { headers })).body.data?.cachedOrder.note;
    expect(await note({ 'x-override-labels': 'beta' })).toBe('shipping');
    expect(await note({})).toBe('orders');
    const again = await graphql(url, cached);
    expect(again.headers.get('cache-control')).toMatch(/max-age=60/);
    expect(await note({ 'x-override-labels': 'beta' })).toBe('shipping');
    expect(await note({})).toBe('orders');
  }, 60_000);

  it('by the header, for a subscription: subscribers naming different labels never share a stream', async () => {
    const url = await gateway({ OVERRIDE_LABELS_HEADER: 'x-override-labels' });
    const subscribe = (headers: Record<string, string>) =>
      stream<{ data?: { orderTicked: { note: string } } }>(
        createSseClient({ url, headers, retryAttempts: 0 }).iterate({ query: 'subscription { orderTicked { note } }' }) as AsyncIterableIterator<{ data?: { orderTicked: { note: string } } }>,
      );
    const beta = subscribe({ 'x-override-labels': 'beta' });
    await beta.received(1);
    const plain = subscribe({});
    const [betaEvents, plainEvents] = await Promise.all([beta.received(3), plain.received(3)]);
    await Promise.all([beta.close(), plain.close()]);
    expect(betaEvents.slice(0, 3).map((event) => event.data?.orderTicked.note)).toEqual(['shipping', 'shipping', 'shipping']);
    expect(plainEvents.slice(0, 3).map((event) => event.data?.orderTicked.note)).toEqual(['orders', 'orders', 'orders']);
  }, 30_000);

  it('by no header unless one is configured', async () => {
    const url = await gateway();
    expect(await shareOnShipping(url, { headers: { 'x-override-labels': 'beta' } })).toBe(0);
  }, 60_000);

  it("by OVERRIDE_LABELS_CLAIM, from the verified token's claim; not from an anonymous caller's", async () => {
    const url = await gateway({ OVERRIDE_LABELS_CLAIM: 'override_labels' });
    const signed = (claims: Record<string, unknown>) =>
      new SignJWT({ role: 'USER', ...claims })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setSubject(toGlobalId('User', 'user-0001'))
        .setIssuedAt()
        .setExpirationTime('1h')
        .sign(new TextEncoder().encode(DEV_JWT_SECRET));
    expect(await shareOnShipping(url, { token: await signed({ override_labels: ['beta'] }) })).toBe(1);
    expect(await shareOnShipping(url, { token: await signed({ override_labels: 'alpha,beta' }) })).toBe(1);
    expect(await shareOnShipping(url, { token: await signed({}) })).toBe(0);
    expect(await shareOnShipping(url, {})).toBe(0);
  }, 60_000);
});

describe('QUERY_PLANNER=js', () => {
  it('refuses a supergraph with labelled overrides, naming the planner to use', async () => {
    await expect(gateway({ QUERY_PLANNER: 'js' })).rejects.toThrow(/QUERY_PLANNER=rust/);
  });

  it('keeps serving the previous supergraph when a reload brings labelled overrides', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ordergraph-override-'));
    try {
      const file = join(dir, 'supergraph.graphql');
      // shipping as it was before the move: no eta, no note.
      writeSupergraph(file, composeSupergraph([source('orders', ORDERS), source('shipping', `${FEDERATION}\n  type Order @key(fields: "id") { id: ID! }`)]));
      const logger = createLogger('gateway', 'silent');
      const url = await gateway({ QUERY_PLANNER: 'js', SUPERGRAPH_POLL_INTERVAL: '50' }, supergraphFile(file, logger));
      const QUERY = `{ order(id: "1") { eta note } }`;
      expect((await graphql(url, QUERY)).body).toEqual({ data: { order: { eta: 'orders', note: 'orders' } } });
      writeSupergraph(file, supergraph);
      await new Promise((resolve) => setTimeout(resolve, 500));
      for (let request = 0; request < 20; request++) {
        expect((await graphql(url, QUERY)).body).toEqual({ data: { order: { eta: 'orders', note: 'orders' } } });
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);
});
