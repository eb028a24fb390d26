// The gateway as its image runs it: built as the Dockerfile builds it (turbo: tsc, then gateway/scripts/bundle.ts,
// which turns dist/index.js into one bundle), started from gateway/dist/index.js with its start script's flags, in
// production mode, in front of the seeded subgraphs. Every other suite runs the sources; this one holds the bundle to
// them: the same subgraphs, asked the same things through the bundle and through the sources' gateway, anonymous, as a
// USER and as an ADMIN, answer the same. Each part loaded on demand is reached once (the @defer planner, the MCP SDK,
// the WebSocket transport of subscriptions to the orders subgraph, OpenTelemetry's SDK and exporter), and every
// subgraph call is signed as the subgraphs require in production.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toGlobalId } from '@ordergraph/core';
import { REPO_ROOT } from '@ordergraph/composition';
import { freePort, graphql, sseClient, startOtlpReceiver, subscribe, token, waitFor, wsClient, type OtlpReceiver } from '@ordergraph/testkit';
import { TEST_SIGNING_SECRET, startSupergraph, type Supergraph } from '@ordergraph/testkit/e2e';
import { startFlags } from '../scripts/deployment-files.js';
import { answer, serveShape, type ServedShape } from './federation-shapes/harness.js';
import { SHAPES } from './federation-shapes/shapes.js';

const SECRET = 'gateway-bundle-test-secret-of-32-characters';
const GATEWAY_DIR = join(REPO_ROOT, 'gateway');
const ENTRY = join(GATEWAY_DIR, 'dist/index.js');
const MANIFEST_OPERATIONS = [{ id: 'product', name: 'ProductById', type: 'query', body: 'query ProductById($id: ID!) { product(id: $id) { id name price } }' }];

let supergraph: Supergraph;
let receiver: OtlpReceiver;
let bundle: Bundle;
let bundleUrl: string;
let dir: string;
let tokens: Record<'ANONYMOUS' | 'USER' | 'ADMIN', string | undefined>;

interface Bundle {
  url: string;
  stop(): Promise<void>;
}

/** The built bundle as a process of its own, as its image starts it, on `env` (production mode unless it says not). */
async function startBundle(env: Record<string, string>): Promise<Bundle> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/graphql`;
  const child: ChildProcess = spawn(process.execPath, [...startFlags('gateway'), ENTRY], {
    cwd: GATEWAY_DIR,
    env: { ...process.env, NODE_ENV: 'production', HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output = (output + chunk).slice(-8000)));
  child.stderr!.on('data', (chunk: Buffer) => (output = (output + chunk).slice(-8000)));
  await waitFor(async () => {
    if (child.exitCode !== null) throw new Error(`the bundled gateway exited with ${child.exitCode}:\n${output}`);
    return fetch(url.replace('/graphql', '/readyz')).then((response) => response.ok, () => false);
  }, 'the bundled gateway ready', 60_000);
  return {
    url,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

beforeAll(async () => {
  // What the Dockerfile runs in its build stage, for the gateway and the packages it needs.
  await promisify(execFile)(join(REPO_ROOT, 'node_modules/.bin/turbo'), ['run', 'build', '--filter=@ordergraph/gateway', '--output-logs=errors-only'], { cwd: REPO_ROOT });
  dir = mkdtempSync(join(tmpdir(), 'ordergraph-bundle-'));
  receiver = await startOtlpReceiver();
  const manifest = join(dir, 'manifest.json');
  writeFileSync(manifest, JSON.stringify({ format: 'apollo-persisted-query-manifest', version: 1, operations: MANIFEST_OPERATIONS }));
  const gatewayEnv = { MCP: 'on', PERSISTED_QUERIES_MANIFEST: manifest };
  supergraph = await startSupergraph({ env: { NODE_ENV: 'production', JWT_SECRET: SECRET }, gatewayEnv });
  const supergraphPath = join(dir, 'supergraph.graphql');
  writeFileSync(supergraphPath, supergraph.sdl);
  bundle = await startBundle({
    ...gatewayEnv,
    JWT_SECRET: SECRET,
    SUBGRAPH_SIGNING_SECRET: TEST_SIGNING_SECRET,
    SUPERGRAPH_PATH: supergraphPath,
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_BSP_SCHEDULE_DELAY: '100',
  });
  bundleUrl = bundle.url;
  tokens = { ANONYMOUS: undefined, USER: await token('USER', 'user-0001', { secret: SECRET }), ADMIN: await token('ADMIN', 'user-0000', { secret: SECRET }) };
}, 300_000);

afterAll(async () => {
  await bundle?.stop();
  await Promise.all([supergraph?.stop(), receiver?.close()]);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the built gateway', () => {
  it('is one bundle: its entry imports its chunks, not the modules tsc wrote beside it', () => {
    const entry = readFileSync(ENTRY, 'utf8');
    expect(entry).toMatch(/from\s*"\.\/chunks\//);
    expect(entry).not.toMatch(/["']\.\/(gateway|config|plugins)\.js["']/);
  });

  const productId = (n: number) => toGlobalId('Product', `product-${String(n).padStart(4, '0')}`);
  const user = toGlobalId('User', 'user-0001');
  // Each with the data that proves it answered something (not two equal refusals) for the callers it is for.
  const operations: [string, string, Record<string, unknown>, (data: any, caller: string) => void][] = [
    ['one subgraph', 'query ($id: ID!) { product(id: $id) { id name price } }', { id: productId(3) }, (data) => expect(data.product.name).toEqual(expect.any(String))],
    [
      'every subgraph',
      'query ($id: ID!) { user(id: $id) { id name orders(limit: 2) { id status total items { quantity product { id name price } } } } }',
      { id: user },
      (data, caller) => caller !== 'ANONYMOUS' && expect(data.user.orders[0].items[0].product.name).toEqual(expect.any(String)),
    ],
    ['admin fields', '{ users(limit: 3) { id email role } }', {}, (data, caller) => caller === 'ADMIN' && expect(data.users).toHaveLength(3)],
    ['a malformed ID', '{ node(id: "not-a-global-id") { id } }', {}, (data) => expect(data).toEqual({ node: null })],
  ];
  describe.each(['ANONYMOUS', 'USER', 'ADMIN'] as const)('as %s', (caller) => {
    it.each(operations)('answers %s as the sources do', async (_, query, variables, answered) => {
      const ask = (url: string) => graphql(url, query, { variables, token: tokens[caller] });
      const [bundled, sources] = await Promise.all([ask(bundleUrl), ask(supergraph.url)]);
      expect(bundled.status).toBe(sources.status);
      expect(bundled.body).toEqual(sources.body);
      answered(bundled.body.data, caller);
    });
  });

  it('answers @defer in parts, as the sources do', async () => {
    const query = `query ($id: ID!) { product(id: $id) { id ... @defer { name price } } }`;
    const parts = async (url: string) => {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'multipart/mixed;incrementalSpec=v0.2, application/json;q=0.9' },
        body: JSON.stringify({ query, variables: { id: productId(4) } }),
      });
      expect(response.headers.get('content-type')).toMatch(/^multipart\/mixed/);
      return (await response.text()).split(/\r?\n/).filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as unknown);
    };
    const [bundled, sources] = await Promise.all([parts(bundleUrl), parts(supergraph.url)]);
    expect(bundled.length).toBeGreaterThan(1);
    expect(bundled).toEqual(sources);
  });

  it('delivers a subscription event over SSE from the orders subgraph (over WebSocket)', async () => {
    const signedIn = tokens.USER!;
    const client = sseClient(bundleUrl, { token: signedIn });
    const events = subscribe(client, 'subscription { newOrderCreated { id status items { quantity product { name } } } }');
    // The subscription is open at the orders subgraph once an order created now reaches it: create until one does.
    const creations: string[] = [];
    for (let attempt = 0; events.results.length === 0 && attempt < 40; attempt++) {
      const { body } = await graphql(bundleUrl, 'mutation ($items: [LineItemInput!]!) { createOrder(input: { items: $items }) { id } }', {
        variables: { items: [{ productId: productId(1), quantity: 1 }] },
        token: signedIn,
      });
      expect(body.errors).toBeUndefined();
      creations.push((body.data as { createOrder: { id: string } }).createOrder.id);
      await new Promise((done) => setTimeout(done, 250));
    }
    const [first] = (await events.received(1)) as { data: { newOrderCreated: { id: string } } }[];
    await events.close();
    client.dispose();
    expect(creations).toContain(first!.data.newOrderCreated.id);
    expect(first!.data.newOrderCreated).toMatchObject({ status: 'PENDING', items: [{ quantity: 1, product: { name: expect.any(String) } }] });
  });

  it('answers over WebSocket (graphql-ws) as the sources do', async () => {
    const over = async (url: string) => {
      const client = wsClient(url.replace('http:', 'ws:'), { token: tokens.USER! });
      const results = await subscribe(client, 'query ($id: ID!) { product(id: $id) { id name price } }', { id: productId(5) }).received(1);
      client.dispose();
      return results;
    };
    const [bundled, sources] = await Promise.all([over(bundleUrl), over(supergraph.url)]);
    expect(bundled[0]).toMatchObject({ data: { product: { id: productId(5), name: expect.any(String) } } });
    expect(bundled).toEqual(sources);
  });

  it('offers the manifest as MCP tools, as the sources do', async () => {
    const tools = async (url: string) => {
      const client = new Client({ name: 'ordergraph-bundle-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', url), { requestInit: { headers: { authorization: `Bearer ${tokens.USER}` } } }));
      const listed = (await client.listTools()).tools.map((tool) => tool.name);
      const called = await client.callTool({ name: 'ProductById', arguments: { id: productId(2) } });
      await client.close();
      return { listed, called };
    };
    const [bundled, sources] = await Promise.all([tools(bundleUrl), tools(supergraph.url)]);
    expect(bundled.listed).toEqual(['ProductById']);
    expect(bundled).toEqual(sources);
  });

  it('traces a request: the HTTP span at the root, the operation below it, its subgraph call below that', async () => {
    const { body } = await graphql(bundleUrl, 'query BundleTraced { products(limit: 1) { id } }');
    expect(body.errors).toBeUndefined();
    const operation = () => receiver.spans.find((span) => span.service === 'gateway' && span.name === 'graphql.operation BundleTraced');
    await waitFor(() => operation() !== undefined, "the bundle's operation span");
    const trace = () => receiver.spans.filter((span) => span.traceId === operation()!.traceId);
    const CLIENT = 3;
    await waitFor(() => trace().some((span) => span.kind === CLIENT), "the bundle's subgraph call span");
    const root = trace().find((span) => span.parentSpanId === undefined);
    expect(root).toMatchObject({ service: 'gateway', name: 'POST /graphql' });
    expect(operation()!.parentSpanId).toBe(root!.spanId);
    const byId = new Map(trace().map((span) => [span.spanId, span]));
    const ancestors = (spanId: string | undefined): string[] => (spanId ? [spanId, ...ancestors(byId.get(spanId)?.parentSpanId)] : []);
    const call = trace().find((span) => span.kind === CLIENT)!;
    expect(ancestors(call.parentSpanId)).toContain(operation()!.spanId);
  });

  it('serves its probes and metrics', async () => {
    const base = bundleUrl.replace('/graphql', '');
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toMatch(/^graphql_request_duration_seconds_count\{/m);
    expect(metrics).toMatch(/^nodejs_heap_size_used_bytes/m);
  });
});

// Supergraphs this repository did not design (every Federation 2 directive, e2e/federation-shapes/shapes.ts), served by
// the bundle in development mode, in front of tiny subgraphs of their own.
describe.each(SHAPES.map((shape) => [shape.name, shape] as const))('the built gateway on a supergraph of other shapes: %s', (_, shape) => {
  let served: ServedShape;
  let shaped: Bundle;
  let callers: (string | undefined)[];
  beforeAll(async () => {
    served = await serveShape(shape);
    const path = join(dir, `${shape.name.replace(/\W+/g, '-')}.graphql`);
    writeFileSync(path, served.sdl);
    shaped = await startBundle({ NODE_ENV: 'development', SUPERGRAPH_PATH: path });
    callers = [undefined, await token('USER', 'user-0001'), await token('ADMIN', 'user-0000')];
  }, 120_000);
  afterAll(async () => {
    await shaped?.stop();
    await served?.stop();
  });

  it('answers each of its queries as expected, anonymous, as a USER and as an ADMIN', async () => {
    for (const { query, data, errorCodes = [] } of shape.queries) {
      for (const bearer of callers) expect({ query, answer: await answer(shaped.url, query, bearer) }).toEqual({ query, answer: { data, errorCodes } });
    }
  });

  it('refuses a document that explodes only when its fragments are expanded, before any subgraph is asked, and stays responsive', async () => {
    const levels = 40;
    const fragments = Array.from({ length: levels }, (_, i) => `fragment f${i} on Query { ...f${i + 1} ...f${i + 1} }`).join(' ');
    const bomb = `{ ...f0 } ${fragments} fragment f${levels} on Query { __typename }`;
    for (const calls of served.received.values()) calls.splice(0);
    expect(await answer(shaped.url, bomb)).toEqual({ data: undefined, errorCodes: ['FIELD_LIMIT_EXCEEDED'] });
    expect([...served.received.values()].flat()).toEqual([]);
    // Sent together, the bomb holds nothing up: the other query is answered in full.
    const [refused, meanwhile] = await Promise.all([answer(shaped.url, bomb), answer(shaped.url, shape.queries[0]!.query)]);
    expect(refused.errorCodes).toEqual(['FIELD_LIMIT_EXCEEDED']);
    expect(meanwhile).toEqual({ data: shape.queries[0]!.data, errorCodes: shape.queries[0]!.errorCodes ?? [] });
  });
});
