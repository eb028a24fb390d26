// npm start: the whole supergraph on embedded defaults with seed data, one process per service as in production, each
// restarted with backoff if it exits (supervisor.ts); Ctrl-C, a signal or the end of its parent drains and stops everything.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEV_JWT_SECRET, signDevToken, toGlobalId } from '@ordergraph/core';
import { graphiqlEnabled, loadGatewayConfig } from '@ordergraph/gateway/config';
import { REPO_ROOT, composeSupergraph, readSupergraphConfig } from '@ordergraph/composition';
import { SEED_ADMIN_LOCAL_ID, SEED_USER_LOCAL_ID } from '@ordergraph/seed';
import { startPlan, type Launch } from './start-plan.js';
import {
  colourWanted,
  paint,
  prettyLogsWanted,
  processProgress,
  renderLogLine,
  setting,
  storeMode,
  summaryBox,
  tokenLines,
} from './start-report.js';
import { spawnNodeChild, stopAllWhenAsked, supervise, type Supervised } from './supervisor.js';

const colours = paint(colourWanted(process.stdout, process.env));
const prettyLogs = prettyLogsWanted(process.stdout, process.env);

// Composes the supergraph from supergraph.yaml, starts the subgraphs and the gateway, waits until each is ready, then
// prints the URL and ready-to-use tokens.
const supergraphPath = join(mkdtempSync(join(tmpdir(), 'ordergraph-')), 'supergraph.graphql');
writeFileSync(supergraphPath, composeSupergraph(readSupergraphConfig()));

const services: Supervised[] = [];
/** Starts a process under supervision: if it exits on its own it is started again, and the others keep serving. */
function launch(name: string, entry: string, env: Record<string, string>): void {
  const spawnChild = () =>
    spawnNodeChild(entry, {
      cwd: REPO_ROOT,
      env: { ...process.env, LOG_LEVEL: setting(process.env, 'LOG_LEVEL') ?? 'warn', ...env },
      // The services' own format stays JSON; only a person at a terminal gets it as one readable line.
      output: (line, stream) => (stream === 'stdout' ? process.stdout : process.stderr).write(`${prettyLogs ? renderLogLine(name, line, colours) : line}\n`),
    });
  services.push(supervise(name, spawnChild));
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

const stop = stopAllWhenAsked(services);

/** Starts a process and waits until it is ready, printing its progress. */
async function start(service: Launch, env: Record<string, string>): Promise<void> {
  const progress = processProgress(service.name, service.port, console.log, colours);
  launch(service.name, service.entry, { ...service.env, PORT: String(service.port), ...env });
  try {
    await waitReady(service.name, service.port);
    progress.ready();
  } catch (error) {
    progress.failed(error instanceof Error ? error.message : String(error));
    throw error;
  }
}

try {
  const { subgraphs, gateway } = startPlan();
  const store = storeMode(process.env);
  console.log(`Store: ${store.label}; ${store.restart}.\n`);
  await Promise.all(subgraphs.map((subgraph) => start(subgraph, { SEED: 'true' })));
  await start(gateway, { SUPERGRAPH_PATH: supergraphPath });

  const secret = setting(process.env, 'JWT_SECRET') ?? DEV_JWT_SECRET;
  const admin = await signDevToken(secret, { sub: toGlobalId('User', SEED_ADMIN_LOCAL_ID), role: 'ADMIN', expiresIn: '12h' });
  const user = await signDevToken(secret, { sub: toGlobalId('User', SEED_USER_LOCAL_ID), role: 'USER', expiresIn: '12h' });
  const url = `http://localhost:${gateway.port}/graphql`;
  console.log(`
${summaryBox({
  url,
  graphiql: graphiqlEnabled(loadGatewayConfig()),
  store,
  redis: setting(process.env, 'REDIS_URL') ?? 'none: rate limits, persisted queries and events stay inside each process (development only)',
})}

${tokenLines([
  { label: 'ADMIN token (admin@example.com, 12 h)', token: admin },
  { label: 'USER token (user1@example.com, 12 h)', token: user },
])}

Seeded: 100 users (admin@example.com is ADMIN), 200 products, 1000 orders.
Try it as user1@example.com:
  export TOKEN=${user}
  curl -s ${url} -H 'content-type: application/json' -H "authorization: Bearer $TOKEN" \\
    -d '{"query":"{ user(id: \\"${toGlobalId('User', SEED_USER_LOCAL_ID)}\\") { name orders { id status total } } }"}'`);
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  await stop(1, 'start-up failed');
}
