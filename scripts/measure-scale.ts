// Measures the subgraphs at size (not part of npm test): starts catalog, orders and users together on the embedded
// store seeded at SEED_SCALE (default 1000: 1,000,000 orders), as `npm start` starts them, and prints each process's
// ready time and peak RSS, then p50/p99 of every case of testkit's API_CASES sent to its subgraph, and the load average.
//
//   npx tsx --conditions=source scripts/measure-scale.ts [--requests=200] [--node-flags="--max-old-space-size=512"]
//
// Each subgraph runs with the Node flags of its package.json `start` script (what its image runs); --node-flags adds
// flags for every subgraph, --orders-flags, --users-flags, --catalog-flags for one of them (a later flag wins).
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '@ordergraph/composition';
import { API_CASES, caseRunner, freePort, percentile, type SubgraphName } from '@ordergraph/testkit';

const argument = (name: string) => process.argv.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3);
const scale = Number(process.env['SEED_SCALE'] || 1000);
const requests = Number(argument('requests') ?? 200);
/** The flags of `node ... dist/index.js` in a subgraph's start script. */
const startFlags = (name: SubgraphName): string[] => {
  const start = (JSON.parse(readFileSync(join(REPO_ROOT, `services/${name}/package.json`), 'utf8')) as { scripts: { start: string } }).scripts.start;
  return start.split(/\s+/).filter((word) => word.startsWith('--'));
};
const flagsOf = (name: SubgraphName) => [...startFlags(name), ...(argument('node-flags') ?? '').split(' '), ...(argument(`${name}-flags`) ?? '').split(' ')].filter(Boolean);

/** A /proc/<pid>/status field in MiB (VmHWM: peak resident set; VmRSS: now). */
function status(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : NaN;
}

interface Started {
  name: SubgraphName;
  child: ChildProcess;
  url: string;
  readySeconds: number;
}

async function start(name: SubgraphName, port: number, env: Record<string, string>, begun: number): Promise<Started> {
  const child = spawn(process.execPath, [...flagsOf(name), '--conditions=source', '--import', 'tsx', join(REPO_ROOT, `services/${name}/src/index.ts`)], {
    cwd: REPO_ROOT,
    env: { ...process.env, NODE_ENV: 'development', LOG_LEVEL: 'warn', SEED: 'true', SEED_SCALE: String(scale), PORT: String(port), HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode} before it was ready`);
    const ready = await fetch(`${base}/readyz`).then((response) => response.ok, () => false);
    if (ready) return { name, child, url: `${base}/graphql`, readySeconds: (performance.now() - begun) / 1000 };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const ports = { catalog: await freePort(), orders: await freePort(), users: await freePort() };
const url = (name: SubgraphName) => `http://127.0.0.1:${ports[name]}/graphql`;
console.log(`SEED_SCALE=${scale}; load average at start ${loadavg().map((n) => n.toFixed(2)).join(' ')}`);
const begun = performance.now();
const started = await Promise.all([
  start('catalog', ports.catalog, {}, begun),
  start('orders', ports.orders, { CATALOG_URL: url('catalog') }, begun),
  start('users', ports.users, { ORDERS_URL: url('orders'), CATALOG_URL: url('catalog') }, begun),
]);
try {
  for (const process of started) {
    console.log(`${process.name.padEnd(8)} ready in ${process.readySeconds.toFixed(1)} s, RSS ${status(process.child.pid!, 'VmRSS').toFixed(0)} MiB, peak ${status(process.child.pid!, 'VmHWM').toFixed(0)} MiB${flagsOf(process.name).length ? ` (${flagsOf(process.name).join(' ')})` : ''}`);
  }
  const runner = await caseRunner({ users: url('users'), orders: url('orders'), catalog: url('catalog') }, scale);
  console.log(`\np50 / p99 at the subgraph, ${requests} requests each, one at a time:`);
  for (const apiCase of API_CASES) {
    for (let i = 0; i < 5; i++) await runner.run(apiCase);
    const times: number[] = [];
    for (let i = 0; i < requests; i++) times.push(await runner.run(apiCase));
    console.log(`  ${`${apiCase.field}: ${apiCase.label}`.padEnd(88)} ${percentile(times, 0.5).toFixed(1).padStart(6)} / ${percentile(times, 0.99).toFixed(1).padStart(6)} ms`);
  }
  console.log('');
  for (const process of started) console.log(`${process.name.padEnd(8)} peak RSS over the whole run ${status(process.child.pid!, 'VmHWM').toFixed(0)} MiB, now ${status(process.child.pid!, 'VmRSS').toFixed(0)} MiB`);
  console.log(`load average at the end ${loadavg().map((n) => n.toFixed(2)).join(' ')}`);
} finally {
  for (const { child } of started) child.kill('SIGTERM');
}
