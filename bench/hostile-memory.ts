// npm run bench:hostile-memory: issue 47's "memory that comes back". The gateway is sent hostile traffic it must refuse
// (bodies far past the limit, idle WebSockets, a frame far past the limit, thousands of subscribes on one socket, then
// floods of distinct persisted-query registrations, nearly all rate-limited), while `{ __typename }` is timed beside
// it and the gateway's memory is sampled; after each flood it idles, and where its memory settles is the figure.
// `npm run bench:hostile-memory -- --help` lists the options.
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { freePort, redisClient, startRedis, apqRegistrations, bigFrame, hugeBody, idleSockets, subscribeFlood, token } from '@ordergraph/testkit';
import { compareHeaps } from './heap-snapshot.js';
import { attachInspector, type Inspector, type MemoryUsage } from './inspector.js';
import { SECRET, SIGNING_SECRET, builtEntry, machineLine, prepareRun, start, startSeededSubgraphs, stop, stopAll, stopOnSignals } from './processes.js';
import { processRssMb } from './process-stats.js';

const { values: options } = parseArgs({
  allowNegative: true,
  options: {
    modes: { type: 'string', default: 'development,production' },
    bodies: { type: 'string', default: '2' },
    'body-mb': { type: 'string', default: '50' },
    sockets: { type: 'string', default: '500' },
    'frame-mb': { type: 'string', default: '10' },
    subscribes: { type: 'string', default: '10000' },
    apq: { type: 'string', default: '10000' },
    'apq-floods': { type: 'string', default: '2' },
    concurrency: { type: 'string', default: '32' },
    idle: { type: 'string', default: '30' },
    env: { type: 'string', multiple: true, default: [] },
    snapshots: { type: 'string' },
    build: { type: 'boolean', default: true },
    help: { type: 'boolean', default: false },
  },
});
if (options.help) {
  console.log(`npm run bench:hostile-memory -- [--modes development,production] [--bodies 2] [--body-mb 50] [--sockets 500] [--frame-mb 10]
    [--subscribes 10000] [--apq 10000] [--apq-floods 2] [--concurrency 32] [--idle 30] [--env NAME=value ...] [--snapshots <dir>] [--no-build]
  modes        development: the gateway as npm start runs it (its TypeScript through tsx, NODE_ENV unset, glibc's malloc, no Redis);
               production: as its image runs it (the built bundle, its start script's Node flags, jemalloc, NODE_ENV=production)
  bodies       POSTs of --body-mb each with a Content-Length, and as many chunked (both refused 413)
  sockets      WebSockets that never send connection_init (closed 4408)
  frame-mb     one WebSocket frame of this size (closed 1009)
  subscribes   subscribes on one connection, as an ADMIN (all but MAX_SUBSCRIPTIONS_PER_CONNECTION refused)
  apq          distinct APQ registrations per flood, from one client, --concurrency at a time (past the rate limit: 429)
  idle         seconds the gateway idles after the hostile run and after each APQ flood before it is read
  env          more environment for the gateway (repeatable): MALLOC_ARENA_MAX=2, say
  snapshots    a directory: heap snapshots of the gateway at the start and the end, and what the end holds more of
  no-build     run the built entries as they are, without npm run build first`);
  process.exit(0);
}
const count = (name: keyof typeof options) => {
  const n = Number(options[name]);
  if (!Number.isInteger(n) || n < 0) throw new Error(`--${name} takes a whole number`);
  return n;
};
const MODES = options.modes.split(',').map((mode) => mode.trim());
for (const mode of MODES) if (mode !== 'development' && mode !== 'production') throw new Error(`--modes: development or production, not ${mode}`);
const [BODIES, BODY_MB, SOCKETS, FRAME_MB, SUBSCRIBES, APQ, APQ_FLOODS, CONCURRENCY, IDLE_S] = (
  ['bodies', 'body-mb', 'sockets', 'frame-mb', 'subscribes', 'apq', 'apq-floods', 'concurrency', 'idle'] as const
).map(count) as [number, number, number, number, number, number, number, number, number];
const EXTRA_ENV = Object.fromEntries(
  options.env.map((pair) => {
    const at = pair.indexOf('=');
    if (at < 1) throw new Error(`--env takes NAME=value, not ${pair}`);
    return [pair.slice(0, at), pair.slice(at + 1)];
  }),
);

const MB = 2 ** 20;
const log = (line: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${line}`);
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));
const load = () => loadavg().map((l) => l.toFixed(2)).join(' ');
const PROBE = 'query Probe { __typename }';
const SUBSCRIPTION = 'subscription { newOrderCreated { id } }';

/** Resident memory of the process's brk heap (glibc's main malloc arena), in MB, from /proc/<pid>/smaps. */
function brkHeapMb(pid: number): number {
  const smaps = readFileSync(`/proc/${pid}/smaps`, 'utf8');
  const at = smaps.indexOf('[heap]');
  if (at < 0) return 0;
  const rss = /^Rss:\s+(\d+) kB$/m.exec(smaps.slice(at));
  return rss ? Number(rss[1]) / 1024 : 0;
}

/** Persisted queries registered in Redis (persisted-queries.ts's keys). */
async function apqKeys(redisUrl: string): Promise<number> {
  const redis = redisClient(redisUrl);
  try {
    let count = 0;
    for (let cursor = '0'; ; ) {
      const [next, keys] = await redis.scan(cursor, 'MATCH', 'ordergraph:apq:*', 'COUNT', 1000);
      count += keys.length;
      if ((cursor = next) === '0') return count;
    }
  } finally {
    redis.disconnect();
  }
}

interface Reading {
  phase: string;
  /** What the gateway answered, in a few words. */
  outcome: string;
  /** Peak RSS while the phase ran, MB. */
  peakMb: number;
  /** After the phase (and its idle, if any). */
  rssMb: number;
  brkMb: number;
  usage: MemoryUsage;
}

/** The gateway's `{ __typename }` latency, every 100 ms while a phase runs (a named operation: its own rate limit). */
function probes(url: string) {
  const latencies: number[] = [];
  let failures = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const started = performance.now();
      try {
        const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: PROBE }), signal: AbortSignal.timeout(10_000) });
        const body = (await response.json()) as { data?: { __typename?: string } };
        if (body.data?.__typename !== 'Query') failures++;
      } catch {
        failures++;
      }
      latencies.push(performance.now() - started);
      await sleep(100);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      const sorted = latencies.sort((a, b) => a - b);
      const p99 = sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] ?? 0;
      return { count: sorted.length, p99Ms: p99, maxMs: sorted[sorted.length - 1] ?? 0, failures };
    },
  };
}

async function runMode(mode: 'development' | 'production', redisUrl: string, supergraphPath: string): Promise<{ readings: Reading[]; probe: string }> {
  const port = await freePort();
  const inspectorPort = await freePort();
  const url = `http://127.0.0.1:${port}/graphql`;
  // Development runs without Redis, as npm start does unless REDIS_URL is set (the in-memory fallback).
  const env = { PORT: String(port), SUPERGRAPH_PATH: supergraphPath, ...(mode === 'production' ? { REDIS_URL: redisUrl } : {}), SHUTDOWN_DELAY: '0', JWT_SECRET: SECRET, SUBGRAPH_SIGNING_SECRET: SIGNING_SECRET, ...EXTRA_ENV };
  log(`${mode}: starting the gateway${Object.keys(EXTRA_ENV).length ? ` with ${options.env.join(' ')}` : ''}`);
  const gateway: ChildProcess =
    mode === 'production'
      ? await start('gateway', builtEntry('gateway'), [], env, url.replace('/graphql', '/healthz'), { execArgv: [`--inspect=127.0.0.1:${inspectorPort}`] })
      : // As npm start runs it (scripts/supervisor.ts): the sources through tsx, no flags, glibc's malloc.
        await start('gateway', 'gateway/src/index.ts', [], { NODE_ENV: 'development', LD_PRELOAD: '', MALLOC_CONF: '', ...env }, url.replace('/graphql', '/healthz'), {
          execArgv: [`--inspect=127.0.0.1:${inspectorPort}`],
        });
  const pid = gateway.pid!;
  const inspector: Inspector = await attachInspector(inspectorPort);
  const readings: Reading[] = [];
  let peak = 0;
  const sampler = setInterval(() => (peak = Math.max(peak, processRssMb(pid))), 100);
  const read = async (phase: string, outcome: string) => {
    const usage = await inspector.memoryUsage();
    readings.push({ phase, outcome, peakMb: Math.max(peak, usage.rss / MB), rssMb: usage.rss / MB, brkMb: brkHeapMb(pid), usage });
    const r = readings[readings.length - 1]!;
    log(`  ${phase}: ${outcome}; RSS ${r.rssMb.toFixed(0)} MB (peak ${r.peakMb.toFixed(0)}), heap ${(usage.heapUsed / MB).toFixed(0)}/${(usage.heapTotal / MB).toFixed(0)} MB, external ${(usage.external / MB).toFixed(1)} MB, array buffers ${(usage.arrayBuffers / MB).toFixed(1)} MB, brk heap ${r.brkMb.toFixed(0)} MB`);
    peak = 0;
  };
  const idle = async () => {
    peak = Math.max(peak, processRssMb(pid));
    await sleep(IDLE_S * 1000);
  };
  const snapshot = async (when: string) => {
    if (!options.snapshots) return '';
    mkdirSync(options.snapshots, { recursive: true });
    const path = resolve(options.snapshots, `gateway-${mode}-${when}.heapsnapshot`);
    await inspector.heapSnapshot(path);
    return path;
  };
  try {
    // Warm: the plans and code of what the floods ask, then a rest.
    const admin = await token('ADMIN', 'user-0000', { secret: SECRET });
    for (let i = 0; i < 50; i++) await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: PROBE }) }).then((r) => r.arrayBuffer());
    await apqRegistrations(url, 50, 4, 'warm');
    await subscribeFlood(url, 30, SUBSCRIPTION, admin);
    await sleep(5_000);
    await read('start (warmed, idle)', '');
    const before = await snapshot('start');

    const probe = probes(url);
    const bodies: (number | 'reset')[] = [];
    for (let i = 0; i < BODIES; i++) bodies.push(await hugeBody(url, BODY_MB * MB, true), await hugeBody(url, BODY_MB * MB, false));
    await read(`${BODIES} + ${BODIES} bodies of ${BODY_MB} MB`, `answered ${bodies.join(', ')}`);
    const closes = await idleSockets(url, SOCKETS);
    await read(`${SOCKETS} idle sockets`, `closed ${[...new Set(closes)].join(', ')}`);
    const frame = await bigFrame(url, FRAME_MB * MB);
    await read(`a ${FRAME_MB} MB frame`, `closed ${frame}`);
    const flood = await subscribeFlood(url, SUBSCRIBES, SUBSCRIPTION, admin);
    await read(`${SUBSCRIBES} subscribes on one socket`, `${flood.refused} refused`);
    const latency = await probe.stop();
    await idle();
    await read(`idle ${IDLE_S} s`, '');
    for (let k = 1; k <= APQ_FLOODS; k++) {
      const statuses = await apqRegistrations(url, APQ, CONCURRENCY, `f${k}_`);
      await idle();
      const stored = mode === 'production' ? `; ${await apqKeys(redisUrl)} registrations in Redis` : '';
      await read(`APQ flood ${k} (${APQ}), idle ${IDLE_S} s`, `${[...statuses].map(([status, n]) => `${n} x ${status}`).join(', ')}${stored}`);
    }
    const settled = await inspector.settledHeap();
    log(`  after two forced full collections: heap ${(settled.heapUsed / MB).toFixed(0)} MB, RSS ${(settled.rss / MB).toFixed(0)} MB`);
    const after = await snapshot('end');
    const diff = before && after ? compareHeaps(after, before) : '';
    if (diff) console.log(diff);
    const probeLine = `\`{ __typename }\` every 100 ms through the hostile run: ${latency.count} requests, p99 ${latency.p99Ms.toFixed(0)} ms, max ${latency.maxMs.toFixed(0)} ms, ${latency.failures} failed; after the APQ floods and two forced full collections: heap ${(settled.heapUsed / MB).toFixed(0)} MB, RSS ${(settled.rss / MB).toFixed(0)} MB`;
    return { readings, probe: probeLine };
  } finally {
    clearInterval(sampler);
    inspector.close();
    await stop(gateway, 5_000);
  }
}

function table(readings: Reading[]): string {
  const mb = (bytes: number) => (bytes / MB).toFixed(0);
  return [
    '| after | gateway answered | peak RSS MB | RSS MB | heap used / total MB | external MB | array buffers MB | brk heap MB |',
    '|---|---|---:|---:|---:|---:|---:|---:|',
    ...readings.map(
      (r) =>
        `| ${r.phase} | ${r.outcome} | ${r.peakMb.toFixed(0)} | ${r.rssMb.toFixed(0)} | ${mb(r.usage.heapUsed)} / ${mb(r.usage.heapTotal)} | ${(r.usage.external / MB).toFixed(1)} | ${(r.usage.arrayBuffers / MB).toFixed(1)} | ${r.brkMb.toFixed(0)} |`,
    ),
  ].join('\n');
}

async function main() {
  const startedAt = new Date();
  log(`hostile memory: ${MODES.join(' and ')}; ${machineLine()}`);
  const redis = options.build ? await prepareRun() : await startRedis();
  if (!options.build) stopOnSignals(async () => { await stopAll(3_000); await redis.close(); });
  const { supergraphPath } = await startSeededSubgraphs(redis.url);
  const results: string[] = [];
  try {
    for (const mode of MODES as ('development' | 'production')[]) {
      const { readings, probe } = await runMode(mode, redis.url, supergraphPath);
      results.push(`**${mode}**${Object.keys(EXTRA_ENV).length ? ` (${options.env.join(' ')})` : ''}\n\n${table(readings)}\n\n${probe}`);
    }
  } finally {
    await stopAll(3_000);
    await redis.close();
  }
  const command = `npm run bench:hostile-memory -- ${process.argv.slice(2).join(' ')}`.trim();
  console.log(`\n${startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC, ${machineLine()} at the end. \`${command}\`\n\n${results.join('\n\n')}`);
  console.log(`load average at the end: ${load()}`);
}

await main();
