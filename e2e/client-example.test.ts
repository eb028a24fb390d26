// The typed client example (examples/client) end to end: Apollo Client against the started supergraph, with the
// gateway as npm start runs it (automatic persisted queries: the client sends the hash, then the document when it is
// not yet registered, over HTTP and WebSocket alike), in allow-list mode loaded with the manifest `npm run manifest`
// builds from the example's documents, and refusing them (one line and exit code 1 from `npm run example`).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runExample } from '@ordergraph/example-client';
import { REPO_ROOT } from '@ordergraph/composition';
import { graphql, readCounter, token, waitFor } from '@ordergraph/testkit';
import { startSupergraph, type Supergraph } from '@ordergraph/testkit/e2e';

const MANIFEST = resolve(REPO_ROOT, 'examples/client/persisted-query-manifest.json');
const active = (url: string) => readCounter(url.replace(/\/graphql$/, '/metrics'), 'graphql_active_subscriptions');

/** The example against `supergraph`, its status subscription open on the orders subgraph before it cancels. */
async function example(supergraph: Supergraph) {
  const lines: string[] = [];
  const result = await runExample({
    url: supergraph.url,
    token: await token('USER', 'user-0001'),
    log: (line) => lines.push(line),
    // Open on the orders subgraph too, not only at the gateway: a cancellation sent before orders listens is an event
    // nobody hears (delivery is at most once), and under load that gap is long enough to lose it.
    subscribed: () => waitFor(async () => (await active(supergraph.url)) === 1 && (await active(supergraph.subgraphUrl('orders'))) === 1, 'the status subscription'),
  });
  expect(result.products).toHaveLength(3);
  expect(result.total).toBeGreaterThan(0);
  expect(result.statusChange).toEqual({ from: 'PENDING', to: 'CANCELLED' });
  expect(lines.at(-1)).toContain(`order ${result.orderId} is now CANCELLED`);
}

/** `npm run example`'s entry as its own process: exit code and output. */
async function runMain(url: string) {
  const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', 'examples/client/src/main.ts'], {
    cwd: REPO_ROOT,
    env: { ...process.env, ORDERGRAPH_URL: url, TOKEN: await token('USER', 'user-0001') },
  });
  let [stdout, stderr] = ['', ''];
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((done) => child.once('exit', done));
  return { code, stdout, stderr };
}

describe('the client example against the gateway as npm start runs it (automatic persisted queries)', () => {
  let supergraph: Supergraph;
  beforeAll(async () => {
    supergraph = await startSupergraph();
  });
  afterAll(() => supergraph?.stop());

  it('registers each document the gateway does not know yet, the subscription over WebSocket included', async () => {
    await example(supergraph);
    // Registered now: a second run sends hashes only, and works the same.
    await example(supergraph);
  });
});

describe('the client example against a gateway in allow-list mode', () => {
  let supergraph: Supergraph;
  beforeAll(async () => {
    supergraph = await startSupergraph({ gatewayEnv: { PERSISTED_QUERIES: 'allowlist', PERSISTED_QUERIES_MANIFEST: MANIFEST } });
  });
  afterAll(() => supergraph?.stop());

  it('lists products, places an order and receives its status change, every operation from the manifest', async () => {
    await example(supergraph);
  });

  it('runs against a gateway that refuses any document not in the manifest', async () => {
    const { status, body } = await graphql(supergraph.url, '{ products(limit: 1) { id } }');
    expect(status).toBe(400);
    expect(body.errors?.[0]?.extensions?.['code']).toBe('PERSISTED_QUERY_NOT_ALLOWED');
  });
});

describe('the client example against a gateway that refuses its subscription', () => {
  let supergraph: Supergraph;
  let dir: string;
  beforeAll(async () => {
    // Another client's manifest: the example's queries and mutations, not its subscription.
    dir = mkdtempSync(join(tmpdir(), 'ordergraph-manifest-'));
    const manifest = JSON.parse(readFileSync(MANIFEST, 'utf8')) as { operations: { type: string }[] };
    writeFileSync(join(dir, 'manifest.json'), JSON.stringify({ ...manifest, operations: manifest.operations.filter((operation) => operation.type !== 'subscription') }));
    supergraph = await startSupergraph({ gatewayEnv: { PERSISTED_QUERIES: 'required', PERSISTED_QUERIES_ADMIN_BYPASS: 'off', PERSISTED_QUERIES_MANIFEST: join(dir, 'manifest.json') } });
  });
  afterAll(async () => {
    await supergraph?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('says in one line which step the gateway refused and why, and exits 1', async () => {
    const { code, stdout, stderr } = await runMain(supergraph.url);
    expect(code).toBe(1);
    expect(stdout).toMatch(/^products: .*\nplaced order \S+: PENDING, total [\d.]+\n$/);
    expect(stderr).toMatch(/^subscribing to the order's status failed: .*\(PERSISTED_QUERY_NOT_ALLOWED\).*\n$/);
  });
});
