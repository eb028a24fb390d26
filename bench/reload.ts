// npm run bench:reload: what a supergraph reload costs the requests around it. The three seeded subgraphs, Redis,
// our gateway (polling its supergraph file) and this load generator (autocannon) run in processes of their own, as
// in bench/gateways.ts. Under a load of many distinct operations, each round measures p99 over a steady window, then
// writes a changed but compatible supergraph (a field's description, which no plan depends on) and measures p99 from
// the write until 10 s after the gateway serves it, with the errors of both windows, and how long the first request of
// each operation sent after the switch took (the one a cold plan cache makes wait). `--help` lists the options.
import { writeFileSync, rmSync, renameSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { toGlobalId } from '@ordergraph/core';
import { composeSupergraph, readSupergraphConfig } from '@ordergraph/composition';
import { seedData } from '@ordergraph/seed';
import { freePort, readCounter, token } from '@ordergraph/testkit';
import { processCpuMs } from './process-stats.js';
import { SECRET, builtEntry, machineLine, prepareRun, start, startSeededSubgraphs, stopAll } from './processes.js';
import { sample, seededRandom } from './workloads.js';

const OPTIONS = {
  rounds: { type: 'string', default: '3' },
  steady: { type: 'string', default: '10' },
  after: { type: 'string', default: '10' },
  quiet: { type: 'string', default: '2' },
  warmup: { type: 'string', default: '8' },
  connections: { type: 'string', default: '16' },
  operations: { type: 'string', default: '200' },
  poll: { type: 'string', default: '1000' },
  env: { type: 'string', default: '' },
  help: { type: 'boolean', default: false },
} as const;

const HELP = `npm run bench:reload -- [options]
  --rounds 3         reloads measured, one after the other
  --steady 10        seconds of load measured before each reload (the steady p99)
  --after 10         seconds measured after the gateway serves the new supergraph
  --quiet 2          reloads measured after the load, one request at a time: every operation once before the
                     reload and once after it, the mean time of each
  --warmup 8         seconds of load before the first round (not measured): every operation planned once
  --connections 16   autocannon's concurrent connections
  --operations 200   distinct operations (documents and names) the load draws from
  --poll 1000        the gateway's SUPERGRAPH_POLL_INTERVAL (ms)
  --env "A=1 B=2"    more settings for the gateway (SUPERGRAPH_WARMUP_OPERATIONS=0 turns the warm-up off)
  --help             this text`;

const { values: options } = parseArgs({ options: OPTIONS });
if (options.help) {
  console.log(HELP);
  process.exit(0);
}
const ROUNDS = Number(options.rounds);
const STEADY_S = Number(options.steady);
const AFTER_S = Number(options.after);
const QUIET = Number(options.quiet);
const WARMUP_S = Number(options.warmup);
const CONNECTIONS = Number(options.connections);

/**
 * `count` distinct operations over the seed: a product, an order, a user with their orders, a page of products, each
 * in several selections and names, so that planning each is work of its own, as with a real client population.
 */
function operations(count: number): { query: string; variants: Record<string, unknown>[] }[] {
  const seed = seedData();
  const draw = seededRandom(20261127);
  const users = sample(seed.users.filter((user) => user.role === 'USER'), 50, draw).map((user) => ({ id: toGlobalId('User', user.localId) }));
  const products = sample(seed.products, 50, draw).map((product) => ({ id: toGlobalId('Product', product.localId) }));
  const orders = sample(seed.orders, 50, draw).map((order) => ({ id: toGlobalId('Order', order.localId) }));
  const pick = (fields: string[], bits: number) => fields.filter((_, index) => (bits >> index) & 1).join(' ');
  const shapes = [
    (i: number) => ({ query: `query Product${i}($id: ID!) { product(id: $id) { id ${pick(['name', 'price', 'currentPrice', 'description', 'createdAt'], i)} } }`, variants: products }),
    (i: number) => ({
      query: `query Order${i}($id: ID!) { order(id: $id) { id ${pick(['status', 'total', 'createdAt'], i)} user { name ${pick(['email', 'role'], i >> 3)} } items { quantity ${pick(['unitPrice', 'subtotal'], i >> 5)} product { id name ${pick(['price', 'currentPrice'], i >> 2)} } } } }`,
      variants: orders,
    }),
    (i: number) => ({
      query: `query UserOrders${i}($id: ID!) { user(id: $id) { name ${pick(['email', 'role'], i)} orders(limit: ${5 + (i % 4) * 5}) { id ${pick(['status', 'total'], i >> 2)} items { quantity product { name ${pick(['price', 'description'], i >> 4)} } } } } }`,
      variants: users,
    }),
    (i: number) => ({ query: `query Products${i}($offset: Int!) { products(limit: ${5 + (i % 6)}, offset: $offset) { id ${pick(['name', 'price', 'currentPrice'], i >> 1)} } }`, variants: [0, 5, 10, 20].map((offset) => ({ offset })) }),
  ];
  return Array.from({ length: count }, (_, i) => shapes[i % shapes.length]!(i));
}

/** The supergraph with Product.price's description marked with `release`: a change of the file that no plan depends on. */
function supergraphRelease(urls: Record<string, string>, release: number): string {
  const subgraphs = readSupergraphConfig().map((subgraph) =>
    subgraph.name === 'catalog' && release > 0 ? { ...subgraph, typeDefs: subgraph.typeDefs.replace('"The list price."', `"The list price (release ${release})."`) } : subgraph,
  );
  const sdl = composeSupergraph(subgraphs, urls);
  if (release > 0 && !sdl.includes(`(release ${release})`)) throw new Error("the benchmark's change did not reach the supergraph (catalog's schema changed?)");
  return sdl;
}

const p99 = (latencies: number[]) => {
  if (latencies.length === 0) return NaN;
  const sorted = [...latencies].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)]!);
};
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

async function main() {
  const started = new Date();
  console.log(`reload benchmark: ${ROUNDS} reloads, ${STEADY_S} s steady + ${AFTER_S} s after each, ${CONNECTIONS} connections, ${options.operations} operations, node ${process.version}`);
  console.log(machineLine());
  const redis = await prepareRun();
  const { urls, supergraphPath } = await startSeededSubgraphs(redis.url);
  // Replaced atomically, as the gateway asks of every writer (supergraph-source.ts).
  const deploy = (release: number) => {
    writeFileSync(`${supergraphPath}.tmp`, supergraphRelease(urls, release));
    renameSync(`${supergraphPath}.tmp`, supergraphPath);
  };
  deploy(0);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/graphql`;
  const extraEnv = Object.fromEntries(options.env.split(' ').filter(Boolean).map((word) => word.split('=', 2) as [string, string]));
  const gateway = await start(
    'gateway',
    builtEntry('gateway'),
    [],
    { PORT: String(port), SUPERGRAPH_PATH: supergraphPath, SUPERGRAPH_POLL_INTERVAL: options.poll, REDIS_URL: redis.url, RATE_LIMIT_MAX: '1000000000', MAX_COMPLEXITY: '1000000', ...extraEnv },
    url.replace('/graphql', '/healthz'),
  );
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${await token('ADMIN', 'user-0000', { secret: SECRET })}` };

  /** Which release the gateway serves: the description it answers for Product.price (administrators may introspect). */
  const served = async (): Promise<number> => {
    const response = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ query: '{ __type(name: "Product") { fields { name description } } }' }) });
    const body = (await response.json()) as { data?: { __type?: { fields: { name: string; description: string | null }[] } } };
    const description = body.data?.__type?.fields.find((field) => field.name === 'price')?.description ?? '';
    return Number(/\(release (\d+)\)/.exec(description)?.[1] ?? 0);
  };

  const ops = operations(Number(options.operations));
  const random = seededRandom(30);
  /** Every response: when it was sent and answered, and which operation it was for. */
  const samples: { sent: number; at: number; ms: number; op: number }[] = [];
  const failures: { at: number; what: string }[] = [];
  let finish!: () => void;
  const finished = new Promise<void>((resolve) => (finish = resolve));
  const load = autocannon({
    url,
    method: 'POST',
    connections: CONNECTIONS,
    pipelining: 1,
    duration: WARMUP_S + ROUNDS * (STEADY_S + AFTER_S + 30) + 60,
    requests: [
      {
        // One request in flight per connection: its context holds that request's operation and when it was sent.
        setupRequest: (request, context) => {
          const op = Math.floor(random() * ops.length);
          const variables = ops[op]!.variants[Math.floor(random() * ops[op]!.variants.length)];
          Object.assign(context, { op, sent: performance.now() });
          return { ...request, headers: { ...headers }, body: JSON.stringify({ query: ops[op]!.query, variables }) };
        },
        onResponse: (status, body, context) => {
          const at = performance.now();
          const { op, sent } = context as { op: number; sent: number };
          samples.push({ sent, at, ms: at - sent, op });
          if (status !== 200) failures.push({ at, what: `${status} ${body.slice(0, 200)}` });
          else if (body.includes('"errors"')) failures.push({ at, what: body.slice(0, 200) });
        },
      },
    ],
  }, () => finish());
  load.on('reqError', (error: Error) => failures.push({ at: performance.now(), what: error.message }));
  const window = (from: number, to: number) => ({
    latencies: samples.filter((s) => s.at >= from && s.at < to).map((s) => s.ms),
    errors: failures.filter((f) => f.at >= from && f.at < to),
  });
  /** The first request of each operation sent once the new supergraph served: the ones a cold plan cache makes wait. */
  const firstUses = (switched: number) => {
    const seen = new Set<number>();
    return samples.filter((s) => s.sent >= switched && !seen.has(s.op) && seen.add(s.op)).map((s) => s.ms);
  };
  const median = (latencies: number[]) => Math.round([...latencies].sort((a, b) => a - b)[Math.floor(latencies.length / 2)] ?? NaN);

  const metrics = url.replace('/graphql', '/metrics');
  const count = (name: string, labels: Record<string, string>) => readCounter(metrics, name, labels).catch(() => NaN);
  const misses = () => count('gateway_query_plan_cache_total', { result: 'miss' });
  const warmupMs = async () => (await count('gateway_supergraph_warmup_duration_seconds_sum', {})) * 1000;
  const rows: string[] = [];
  const quietRows: string[] = [];
  let loading = true;
  const stopLoad = async () => {
    if (!loading) return;
    loading = false;
    load.stop();
    await finished;
  };
  /** Every operation once, one at a time: the mean time of a request, and the answers that failed. */
  const oneByOne = async () => {
    let total = 0;
    let errors = 0;
    for (const op of ops) {
      const sent = performance.now();
      const response = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ query: op.query, variables: op.variants[0] }) });
      const text = await response.text();
      total += performance.now() - sent;
      if (response.status !== 200 || text.includes('"errors"')) errors++;
    }
    return { meanMs: total / ops.length, errors };
  };
  try {
    await sleep(WARMUP_S * 1000);
    for (let round = 1; round <= ROUNDS; round++) {
      const steadyFrom = performance.now();
      await sleep(STEADY_S * 1000);
      const written = performance.now();
      const cpu0 = processCpuMs(gateway.pid!);
      const [misses0, warmup0] = [await misses(), await warmupMs()];
      deploy(round);
      while ((await served()) !== round) await sleep(25);
      const switched = performance.now();
      await sleep(AFTER_S * 1000);
      const end = performance.now();
      const missesAfter = (await misses()) - misses0;
      const warmup = Math.round((await warmupMs()) - warmup0);
      const steady = window(steadyFrom, written);
      const after = window(written, end);
      const first = window(written, switched + 1000);
      const row = {
        round,
        switchMs: Math.round(switched - written),
        steadyP99: p99(steady.latencies),
        afterP99: p99(after.latencies),
        firstSecondP99: p99(first.latencies),
        steadyMedian: median(steady.latencies),
        firstUseMedian: median(firstUses(switched)),
        firstUseP99: p99(firstUses(switched)),
        afterMax: Math.round(Math.max(...after.latencies)),
        requestsAfter: after.latencies.length,
        errors: steady.errors.length + after.errors.length,
        planCacheMisses: missesAfter,
        warmupMs: warmup,
        gatewayCpuMs: Math.round(processCpuMs(gateway.pid!) - cpu0),
      };
      console.log(`  round ${round}: ${JSON.stringify(row)}`);
      for (const failure of after.errors.slice(0, 3)) console.log(`    error: ${failure.what}`);
      rows.push(
        `| ${round} | ${row.steadyP99} | ${row.afterP99} | ${(row.afterP99 / row.steadyP99).toFixed(2)}x | ${row.firstSecondP99} | ${row.afterMax} | ${row.steadyMedian} | ${row.firstUseMedian} | ${row.firstUseP99} | ${Number.isNaN(row.planCacheMisses) ? '-' : row.planCacheMisses} | ${Number.isNaN(row.warmupMs) ? '-' : row.warmupMs} | ${row.switchMs} | ${row.errors} |`,
      );
    }
    await stopLoad();
    // Without load, the reload's cost to each operation's first request stands out of the machine's noise.
    for (let quiet = 1; quiet <= QUIET; quiet++) {
      const release = ROUNDS + quiet;
      const before = await oneByOne();
      const misses0 = await misses();
      deploy(release);
      while ((await served()) !== release) await sleep(25);
      const after = await oneByOne();
      const row = { reload: release, beforeMeanMs: before.meanMs.toFixed(2), firstUseMeanMs: after.meanMs.toFixed(2), planCacheMisses: (await misses()) - misses0, errors: before.errors + after.errors };
      console.log(`  one at a time: ${JSON.stringify(row)}`);
      quietRows.push(`| ${release} | ${row.beforeMeanMs} | ${row.firstUseMeanMs} | ${(after.meanMs / before.meanMs).toFixed(2)}x | ${Number.isNaN(row.planCacheMisses) ? '-' : row.planCacheMisses} | ${row.errors} |`);
    }
  } finally {
    await stopLoad();
    console.log(
      `the gateway's counters: operations warmed ${await count('gateway_supergraph_warmup_operations_total', { outcome: 'planned' })}, ` +
        `unfinished ${await count('gateway_supergraph_warmup_operations_total', { outcome: 'unfinished' })}; ` +
        `plan cache hits ${await count('gateway_query_plan_cache_total', { result: 'hit' })}, misses ${await count('gateway_query_plan_cache_total', { result: 'miss' })}`,
    );
    await stopAll();
    await redis.close();
    rmSync(supergraphPath, { force: true });
  }
  console.log(`\n${started.toISOString()}, ${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}, load average at the end ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  console.log(
    '\n| reload | steady p99 ms | p99 ms, write to switch + 10 s | ratio | p99 ms, write to switch + 1 s | max ms | steady median ms | first use of each operation after the switch: median ms | its p99 ms | plan cache misses after the write | warm-up ms | write to switch ms | errors |',
  );
  console.log('|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const row of rows) console.log(row);
  if (quietRows.length === 0) return;
  console.log('\n| reload, one request at a time | mean ms, every operation once before | mean ms, every operation once after the switch | ratio | plan cache misses | errors |');
  console.log('|---:|---:|---:|---:|---:|---:|');
  for (const row of quietRows) console.log(row);
}

await main();
