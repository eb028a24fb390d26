// The gateway as its image runs it: built as the Dockerfile builds it (turbo: tsc, then gateway/scripts/bundle.ts,
// which turns dist/index.js into one bundle), started from gateway/dist/index.js with its start script's flags, in
// production mode, in front of the seeded subgraphs. Every other suite runs the sources; this one holds the bundle to
// them: the same subgraphs, asked the same things through the bundle and through the sources' gateway, anonymous, as a
// USER and as an ADMIN, answer the same. Each part loaded on demand is reached once (the @defer planner, the MCP SDK,
// the WebSocket transport of subscriptions to the orders subgraph, OpenTelemetry's SDK and exporter), and every
// subgraph call is signed as the subgraphs require in production.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toGlobalId } from '@ordergraph/core';
import { REPO_ROOT } from '@ordergraph/composition';
import { freePort, graphql, startOtlpReceiver, subscribe, token, waitFor, wsClient, type OtlpReceiver } from '@ordergraph/testkit';
import { TEST_SIGNING_SECRET, startSupergraph, type Supergraph } from '@ordergraph/testkit/e2e';
import { startFlags } from '../scripts/deployment-files.js';

const SECRET = 'gateway-bundle-test-secret-of-32-characters';
const GATEWAY_DIR = join(REPO_ROOT, 'gateway');
const ENTRY = join(GATEWAY_DIR, 'dist/index.js');
const MANIFEST_OPERATIONS = [{ id: 'product', name: 'ProductById', type: 'query', body: 'query ProductById($id: ID!) { product(id: $id) { id name price } }' }];

let supergraph: Supergraph;
let receiver: OtlpReceiver;
let bundle: ChildProcess;
let bundleUrl: string;
let bundleOutput = '';
let dir: string;
let tokens: Record<'ANONYMOUS' | 'USER' | 'ADMIN', string | undefined>;

/** Runs a command to its end, failing with its output if it fails. */
function run(command: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk));
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${command} ${args.join(' ')} exited with ${code}:\n${output.slice(-4000)}`))));
  });
}

beforeAll(async () => {
  // What the Dockerfile runs in its build stage, for the gateway and the packages it needs.
  await run(join(REPO_ROOT, 'node_modules/.bin/turbo'), ['run', 'build', '--filter=@ordergraph/gateway', '--output-logs=errors-only']);
  dir = mkdtempSync(join(tmpdir(), 'ordergraph-bundle-'));
  receiver = await startOtlpReceiver();
  const manifest = join(dir, 'manifest.json');
  writeFileSync(manifest, JSON.stringify({ format: 'apollo-persisted-query-manifest', version: 1, operations: MANIFEST_OPERATIONS }));
  const gatewayEnv = { MCP: 'on', PERSISTED_QUERIES_MANIFEST: manifest };
  supergraph = await startSupergraph({ env: { NODE_ENV: 'production', JWT_SECRET: SECRET }, gatewayEnv });
  const supergraphPath = join(dir, 'supergraph.graphql');
  writeFileSync(supergraphPath, supergraph.sdl);
  const port = await freePort();
  bundleUrl = `http://127.0.0.1:${port}/graphql`;
  bundle = spawn(process.execPath, [...startFlags('gateway'), ENTRY], {
    cwd: GATEWAY_DIR,
    env: {
      ...process.env,
      ...gatewayEnv,
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'warn',
      JWT_SECRET: SECRET,
      SUBGRAPH_SIGNING_SECRET: TEST_SIGNING_SECRET,
      SUPERGRAPH_PATH: supergraphPath,
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_BSP_SCHEDULE_DELAY: '100',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  bundle.stdout!.on('data', (chunk: Buffer) => (bundleOutput = (bundleOutput + chunk).slice(-8000)));
  bundle.stderr!.on('data', (chunk: Buffer) => (bundleOutput = (bundleOutput + chunk).slice(-8000)));
  const ready = () => fetch(bundleUrl.replace('/graphql', '/readyz')).then((response) => response.ok, () => false);
  await waitFor(async () => {
    if (bundle.exitCode !== null) throw new Error(`the bundled gateway exited with ${bundle.exitCode}:\n${bundleOutput}`);
    return ready();
  }, 'the bundled gateway ready', 60_000);
  tokens = { ANONYMOUS: undefined, USER: await token('USER', 'user-0001', { secret: SECRET }), ADMIN: await token('ADMIN', 'user-0000', { secret: SECRET }) };
}, 300_000);

afterAll(async () => {
  if (bundle && bundle.exitCode === null) {
    const exited = new Promise((resolve) => bundle.once('exit', resolve));
    bundle.kill('SIGTERM');
    await exited;
  }
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
    const response = await fetch(bundleUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${signedIn}` },
      body: JSON.stringify({ query: 'subscription { newOrderCreated { id status items { quantity product { name } } } }' }),
    });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    let text = '';
    const event = (async () => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`the stream ended: ${text}`);
        text += new TextDecoder().decode(value);
        const data = /event: next\ndata: (.+)\n/.exec(text);
        if (data) return JSON.parse(data[1]!) as { data: { newOrderCreated: { id: string; status: string } } };
      }
    })();
    // The subscription is open at the orders subgraph once an order created now reaches it: create until one does.
    let delivered = false;
    const creations: string[] = [];
    void event.then(() => (delivered = true), () => (delivered = true));
    for (let attempt = 0; !delivered && attempt < 40; attempt++) {
      const { body } = await graphql(bundleUrl, 'mutation ($items: [LineItemInput!]!) { createOrder(input: { items: $items }) { id } }', {
        variables: { items: [{ productId: productId(1), quantity: 1 }] },
        token: signedIn,
      });
      expect(body.errors).toBeUndefined();
      creations.push((body.data as { createOrder: { id: string } }).createOrder.id);
      await new Promise((done) => setTimeout(done, 250));
    }
    const first = await event;
    await reader.cancel();
    expect(creations).toContain(first.data.newOrderCreated.id);
    expect(first.data.newOrderCreated).toMatchObject({ status: 'PENDING', items: [{ quantity: 1, product: { name: expect.any(String) } }] });
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
