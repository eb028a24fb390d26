// npm start: the whole supergraph on embedded defaults with seed data, one process per service as in production.
// Composes the supergraph from supergraph.yaml, starts catalog, orders, users and the gateway, waits until each is
// ready, then prints the URL and ready-to-use tokens. Ctrl-C stops everything.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEV_JWT_SECRET, signDevToken, toGlobalId } from '@ordergraph/common';
import { REPO_ROOT, composeSupergraph, readSupergraphConfig } from '@ordergraph/gateway/supergraph';
import { SEED_ADMIN_LOCAL_ID, SEED_USER_LOCAL_ID } from '@ordergraph/seed';
import { startPlan } from './start-plan.js';

const supergraphPath = join(mkdtempSync(join(tmpdir(), 'ordergraph-')), 'supergraph.graphql');
writeFileSync(supergraphPath, composeSupergraph(readSupergraphConfig()));

const children: ChildProcess[] = [];
function launch(entry: string, env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', entry], {
    cwd: REPO_ROOT,
    env: { ...process.env, LOG_LEVEL: process.env['LOG_LEVEL'] ?? 'warn', ...env },
    stdio: 'inherit',
  });
  child.on('exit', (code, signal) => {
    if (!stopping) {
      console.error(`${entry} exited (${signal ?? code}); stopping the supergraph`);
      void stop(1);
    }
  });
  children.push(child);
  return child;
}

async function waitReady(name: string, port: number): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/readyz`)).ok) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${name} was not ready on port ${port} within 60 s`);
}

let stopping = false;
async function stop(code: number): Promise<never> {
  stopping = true;
  for (const child of children) child.kill('SIGTERM');
  await Promise.all(children.map((child) => new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.once('exit', resolve)))));
  process.exit(code);
}
process.on('SIGINT', () => void stop(0));
process.on('SIGTERM', () => void stop(0));

try {
  const { subgraphs, gateway } = startPlan();
  for (const subgraph of subgraphs) {
    console.log(`starting ${subgraph.name} on :${subgraph.port}`);
    launch(subgraph.entry, { ...subgraph.env, PORT: String(subgraph.port), SEED: 'true' });
  }
  await Promise.all(subgraphs.map((subgraph) => waitReady(subgraph.name, subgraph.port)));
  console.log(`starting gateway on :${gateway.port}`);
  launch(gateway.entry, { ...gateway.env, PORT: String(gateway.port), SUPERGRAPH_PATH: supergraphPath });
  await waitReady('gateway', gateway.port);

  const secret = process.env['JWT_SECRET'] ?? DEV_JWT_SECRET;
  const admin = await signDevToken(secret, { sub: toGlobalId('User', SEED_ADMIN_LOCAL_ID), role: 'ADMIN', expiresIn: '12h' });
  const user = await signDevToken(secret, { sub: toGlobalId('User', SEED_USER_LOCAL_ID), role: 'USER', expiresIn: '12h' });
  console.log(`
ordergraph is running: http://localhost:${gateway.port}/graphql
  seeded: 100 users (admin@example.com is ADMIN), 200 products, 1000 orders

ADMIN token (admin@example.com, 12 h):
  ${admin}

USER token (user1@example.com, 12 h):
  ${user}

Try it as user1@example.com:
  export TOKEN=${user}
  curl -s http://localhost:${gateway.port}/graphql -H 'content-type: application/json' -H "authorization: Bearer $TOKEN" \\
    -d '{"query":"{ user(id: \\"${toGlobalId('User', SEED_USER_LOCAL_ID)}\\") { name orders { id status total } } }"}'

Press Ctrl-C to stop.`);
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  await stop(1);
}
