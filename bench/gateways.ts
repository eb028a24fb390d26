// npm run bench: the users' comparison of gateways. The three seeded subgraphs (production mode), Redis, each gateway
// and this load generator (autocannon) all run in processes of their own; one gateway is under load at a time, in
// rounds that alternate the order, so that a busy machine weighs on all alike. Bodies are verified identical before
// timing and compared on every response under load. Prints progress, then a Markdown table, and writes the chart into
// the git-ignored bench/out/ (--chart elsewhere). `npm run bench -- --help` lists the options (gateways-options.ts).
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { composeSupergraph, readSupergraphConfig } from '@ordergraph/composition';
import { freePort, readCounter, startRedis, token } from '@ordergraph/testkit';
import { formatSelfTimes, selfTimes } from './cpu-profile.js';
import { compareHeaps } from './heap-snapshot.js';
import { canonicalJson, processCpuMs, processRssMb } from './process-stats.js';
import { SECRET, buildEntries, builtEntry, start, stopAll, stopOnSignals } from './processes.js';
import { renderChart, renderTable, type Measurement } from './report.js';
import { SCENARIOS } from './scenarios.js';
import { GATEWAYS_HELP, GATEWAYS_OPTIONS } from './gateways-options.js';

const { values: options } = parseArgs({ options: GATEWAYS_OPTIONS });
if (options.help) {
  console.log(GATEWAYS_HELP);
  process.exit(0);
}
const ROUNDS = Number(options.rounds);
const DURATION = Number(options.duration);
const WARMUP = Number(options.warmup);
const CONNECTIONS = Number(options.connections);
const scenarios = SCENARIOS.filter((scenario) => options.scenarios.split(',').includes(scenario.id));

interface Gateway {
  name: string;
  url: string;
  process: ChildProcess;
}

/** Has a gateway started with --heapsnapshot-signal write a snapshot; it answers again once the file is complete. */
async function heapSnapshot(gateway: Gateway, dir: string): Promise<string> {
  const before = new Set(readdirSync(dir));
  gateway.process.kill('SIGUSR2');
  for (;;) {
    await new Promise((done) => setTimeout(done, 500));
    const written = readdirSync(dir).find((file) => file.endsWith('.heapsnapshot') && !before.has(file));
    const answering = await fetch(gateway.url.replace('/graphql', '/healthz')).then((response) => response.status < 500, () => false);
    if (written && answering) return resolve(dir, written);
  }
}

/** With --profile, ours and the bare runtime on the Rust planner write CPU profiles, each into a directory of its own. */
const PROFILED = { ours: 'our gateway', bare: 'the bare runtime on the Rust planner' };
const profiled = (which: keyof typeof PROFILED) => (options.profile ? ['--cpu-prof', `--cpu-prof-dir=${resolve(options.profile, which)}`] : []);

async function startGateways(supergraphPath: string, redisUrl: string): Promise<Gateway[]> {
  const gateways: Gateway[] = [];
  const wanted = options.gateways.split(',');
  if (options.heap) mkdirSync(options.heap, { recursive: true });
  const heap = options.heap ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${resolve(options.heap)}`] : [];
  const add = async (name: string, script: string, args: (port: number) => string[], env: Record<string, string> = {}, execArgv: string[] = [], startFlags = true) => {
    if (!wanted.includes(name)) return;
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/graphql`;
    // The gateways of bench/servers import only packages: Node strips their types, no transpiler runs beside them.
    const child = await start(name, script, args(port), { PORT: String(port), ...env }, url.replace('/graphql', '/healthz'), { execArgv, typeStripping: true, startFlags });
    gateways.push({ name, url, process: child });
    process.stdout.write(`  ${name} on ${url}\n`);
  };
  const oursEnv = {
    SUPERGRAPH_PATH: supergraphPath,
    REDIS_URL: redisUrl,
    // High enough that the benchmark measures routing, not refusals.
    RATE_LIMIT_MAX: '1000000000',
    MAX_COMPLEXITY: '1000000',
  };
  // start() gives it the Node.js flags of its start script, as production runs it (V8's heap sized for its pod).
  await add('ours', builtEntry('gateway'), () => [], oursEnv, [...heap, ...profiled('ours')]);
  // The same gateway on other V8 settings, to weigh memory against CPU in one run.
  if (options['ours-with'] !== undefined) {
    const variant = `ours with ${options['ours-with'] || "V8's defaults"}`;
    wanted.push(variant);
    // NAME=value words are its environment, the others Node.js flags.
    const env: Record<string, string> = {};
    const flags: string[] = [];
    for (const word of options['ours-with'].split(' ').filter(Boolean)) {
      const setting = /^([A-Z_]+)=(.*)$/s.exec(word);
      if (setting) env[setting[1]!] = setting[2]!;
      else flags.push(word);
    }
    await add(variant, builtEntry('gateway'), () => [], { ...oursEnv, ...env }, flags, false);
  }
  await add('hive runtime', 'bench/servers/hive-runtime.ts', (port) => [supergraphPath, String(port)]);
  await add('hive runtime + rust planner', 'bench/servers/hive-runtime.ts', (port) => [supergraphPath, String(port), '--rust'], {}, [...heap, ...profiled('bare')]);
  await add('@apollo/gateway', 'bench/servers/apollo-gateway.ts', (port) => [supergraphPath, String(port)]);
  return gateways;
}

async function main() {
  const started = new Date();
  console.log(`gateways benchmark: ${scenarios.map((s) => s.id).join(', ')}; ${ROUNDS} rounds x ${DURATION} s, ${CONNECTIONS} connections, node ${process.version}`);
  console.log(`machine: ${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  buildEntries();
  const redis = await startRedis();
  stopOnSignals(async () => {
    await stopAll(3_000);
    await redis.close();
  });
  const subgraphs = { users: await freePort(), orders: await freePort(), catalog: await freePort() };
  const urls = Object.fromEntries(Object.entries(subgraphs).map(([name, port]) => [name, `http://127.0.0.1:${port}/graphql`]));
  console.log('starting subgraphs (production mode, seeded embedded stores)');
  const subgraphProcesses = {
    catalog: await start('catalog', builtEntry('services/catalog'), [], { PORT: String(subgraphs.catalog), SEED: 'true' }, urls['catalog']!.replace('/graphql', '/healthz')),
    orders: await start('orders', builtEntry('services/orders'), [], { PORT: String(subgraphs.orders), SEED: 'true', CATALOG_URL: urls['catalog']!, REDIS_URL: redis.url }, urls['orders']!.replace('/graphql', '/healthz')),
    users: await start('users', builtEntry('services/users'), [], { PORT: String(subgraphs.users), SEED: 'true', ORDERS_URL: urls['orders']!, CATALOG_URL: urls['catalog']! }, urls['users']!.replace('/graphql', '/healthz')),
  };
  const supergraphPath = resolve(tmpdir(), `ordergraph-bench-supergraph.${process.pid}.graphql`);
  writeFileSync(supergraphPath, composeSupergraph(readSupergraphConfig(), urls));
  console.log('starting gateways');
  const gateways = await startGateways(supergraphPath, redis.url);
  const authorization = `Bearer ${await token('ADMIN', 'user-0000', { secret: SECRET })}`;
  const headers = { 'content-type': 'application/json', authorization };
  const storeCalls = async () => {
    let sum = 0;
    for (const url of Object.values(urls)) sum += await readCounter(url.replace('/graphql', '/metrics'), 'datastore_operations_total');
    return sum;
  };
  const subgraphCpuMs = () => Object.values(subgraphProcesses).reduce((sum, child) => sum + processCpuMs(child.pid!), 0);

  const measurements: Measurement[] = [];
  try {
    for (const scenario of scenarios) {
      const body = JSON.stringify({ query: scenario.query, variables: scenario.variables });
      // Every gateway's answer, verified identical (as JSON) before any timing; under load each response must be
      // byte for byte the one its gateway gave here.
      const expected = new Map<string, string>();
      for (const gateway of gateways) {
        const response = await fetch(gateway.url, { method: 'POST', headers, body });
        const text = await response.text();
        const parsed = JSON.parse(text) as { errors?: unknown };
        if (response.status !== 200 || parsed.errors) throw new Error(`${gateway.name} (${scenario.id}): ${response.status} ${text.slice(0, 500)}`);
        expected.set(gateway.name, text);
      }
      const reference = canonicalJson([...expected.values()][0]!);
      for (const [name, text] of expected) {
        if (canonicalJson(text) !== reference) throw new Error(`${name} answers scenario ${scenario.id} differently from ${gateways[0]!.name}`);
      }
      console.log(`\n(${scenario.id}) ${scenario.name}: response ${(Buffer.byteLength(reference) / 1024).toFixed(1)} KB, identical from all ${gateways.length} gateways`);

      const load = (gateway: Gateway, seconds: number) =>
        autocannon({ url: gateway.url, method: 'POST', headers, body, connections: CONNECTIONS, duration: seconds, expectBody: expected.get(gateway.name)! });
      for (const gateway of gateways) await load(gateway, WARMUP);

      const totals = new Map(gateways.map((gateway) => [gateway.name, { requests: 0, seconds: 0, errors: 0, mismatches: 0, gatewayCpu: 0, subgraphCpu: 0, storeCalls: 0, peakRss: 0, p50: [] as number[], p99: [] as number[], rounds: [] as Measurement['rounds'] }]));
      for (let round = 0; round < ROUNDS; round++) {
        for (const gateway of round % 2 === 0 ? gateways : [...gateways].reverse()) {
          const total = totals.get(gateway.name)!;
          const [cpu0, subgraphCpu0, store0] = [processCpuMs(gateway.process.pid!), subgraphCpuMs(), await storeCalls()];
          const sampler = setInterval(() => (total.peakRss = Math.max(total.peakRss, processRssMb(gateway.process.pid!))), 100);
          const result = await load(gateway, DURATION);
          clearInterval(sampler);
          total.peakRss = Math.max(total.peakRss, processRssMb(gateway.process.pid!));
          const requests = result.requests.total;
          total.requests += requests;
          total.seconds += result.duration;
          total.errors += result.errors + result.timeouts + result.non2xx;
          total.mismatches += result.mismatches;
          const gatewayCpu = processCpuMs(gateway.process.pid!) - cpu0;
          total.gatewayCpu += gatewayCpu;
          total.rounds.push({ rps: requests / result.duration, gatewayCpuMs: gatewayCpu / requests });
          total.subgraphCpu += subgraphCpuMs() - subgraphCpu0;
          total.storeCalls += (await storeCalls()) - store0;
          total.p50.push(result.latency.p50);
          total.p99.push(result.latency.p99);
          console.log(
            `  round ${round + 1}/${ROUNDS} ${gateway.name.padEnd(28)} ${(requests / result.duration).toFixed(0).padStart(6)} req/s  p50 ${result.latency.p50} ms  p99 ${result.latency.p99} ms  ` +
              `errors ${result.errors + result.non2xx}  differing bodies ${result.mismatches}`,
          );
        }
      }
      for (const gateway of gateways) {
        const total = totals.get(gateway.name)!;
        const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
        measurements.push({
          scenario: scenario.id,
          scenarioName: scenario.name,
          gateway: gateway.name,
          rps: total.requests / total.seconds,
          p50: median(total.p50),
          p99: median(total.p99),
          gatewayCpuMs: total.gatewayCpu / total.requests,
          rounds: total.rounds,
          subgraphCpuMs: total.subgraphCpu / total.requests,
          peakRssMb: total.peakRss,
          storeCalls: total.storeCalls / total.requests,
          errors: total.errors,
          mismatches: total.mismatches,
          responseKb: Buffer.byteLength(reference) / 1024,
        });
      }
    }
    if (options.heap) {
      const [ours, bare] = ['ours', 'hive runtime + rust planner'].map((name) => gateways.find((gateway) => gateway.name === name));
      if (ours && bare) console.log(`\n${compareHeaps(await heapSnapshot(ours, options.heap), await heapSnapshot(bare, options.heap))}`);
    }
  } finally {
    console.log('stopping every process');
    // Gateways first (the last started), so that no request of theirs finds its subgraph gone.
    await stopAll();
    await redis.close();
    rmSync(supergraphPath, { force: true });
  }
  const machine = `${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}, node ${process.version}, load average at the end ${loadavg().map((l) => l.toFixed(2)).join(' ')}`;
  console.log(`\n${renderTable(measurements, { date: started.toISOString(), machine, rounds: ROUNDS, duration: DURATION, connections: CONNECTIONS })}`);
  mkdirSync(dirname(resolve(options.chart)), { recursive: true });
  writeFileSync(options.chart, renderChart(measurements, `${started.toISOString().slice(0, 10)}, ${machine}`));
  console.log(`chart written to ${resolve(options.chart)}`);
  for (const [which, name] of options.profile ? Object.entries(PROFILED) : []) {
    const dir = resolve(options.profile!, which);
    const profiles = existsSync(dir) ? readdirSync(dir).filter((file) => file.endsWith('.cpuprofile')).map((file) => resolve(dir, file)) : [];
    const newest = profiles.sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
    if (newest) console.log(`\n${name}'s top self times (${newest}):\n${formatSelfTimes(selfTimes(newest, 25))}`);
  }
  const failed = measurements.some((m) => m.errors > 0 || m.mismatches > 0);
  if (failed) console.error('some gateway answered with errors or differing bodies under load (see the table)');
  process.exitCode = failed ? 1 : 0;
}

await main();
