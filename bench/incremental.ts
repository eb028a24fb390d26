// npm run bench:incremental: what answering in parts costs. The same order query, a seeded order drawn per request,
// answered whole (the Rust planner), with @defer and with @stream (both on the JavaScript planner, the Rust one cannot
// defer), the last two in either incremental format. The seeded subgraphs, Redis and our gateway run in processes of
// their own, as `npm run bench` starts them; modes alternate their order round by round. Every answer is put back
// together and checked against the whole answer to its order. `npm run bench:incremental -- --help` lists the options.
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { toGlobalId } from '@ordergraph/core';
import { seedData } from '@ordergraph/seed';
import { assembled, freePort, partsOf, token } from '@ordergraph/testkit';
import { canonicalJson, processCpuMs, processRssMb } from './process-stats.js';
import { SECRET, builtEntry, machineLine, prepareRun, start, startSeededSubgraphs, stopAll } from './processes.js';
import { sample, seededRandom } from './workloads.js';

const { values: options } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '8' },
    concurrency: { type: 'string', default: '16' },
    help: { type: 'boolean', default: false },
  },
});
if (options.help) {
  console.log(`npm run bench:incremental -- [--rounds 3] [--duration 8] [--concurrency 16]
  rounds        rounds per mode, the modes' order reversed every other round
  duration      seconds of load per mode and round (plus a first warm-up round that is not counted)
  concurrency   requests in flight at once`);
  process.exit(0);
}

const FIELDS = 'quantity unitPrice subtotal product { id name price }';
const MODES = [
  { name: 'whole (Rust planner)', accept: 'application/graphql-response+json', query: `query Order($id: ID!) { order(id: $id) { id status total user { name email } items { ${FIELDS} } } }` },
  { name: '@defer, deferSpec=20220824', accept: 'multipart/mixed;deferSpec=20220824', query: `query Order($id: ID!) { order(id: $id) { id status total ... @defer { user { name email } items { ${FIELDS} } } } }` },
  { name: '@defer, incrementalSpec=v0.2', accept: 'multipart/mixed;incrementalSpec=v0.2', query: `query Order($id: ID!) { order(id: $id) { id status total ... @defer { user { name email } items { ${FIELDS} } } } }` },
  { name: '@stream, incrementalSpec=v0.2', accept: 'multipart/mixed;incrementalSpec=v0.2', query: `query Order($id: ID!) { order(id: $id) { id status total user { name email } items @stream(initialCount: 1) { ${FIELDS} } } }` },
] as const;

/** An answer in parts put back together; an error anywhere is a wrong answer. */
function assembledData(contentType: string, text: string): unknown {
  const { data, errors } = assembled(partsOf(contentType, text));
  if (errors.length > 0) throw new Error(JSON.stringify(errors));
  return data;
}

async function main() {
  const rounds = Number(options.rounds);
  const seconds = Number(options.duration);
  const concurrency = Number(options.concurrency);
  console.log(`incremental delivery benchmark: ${rounds} rounds x ${seconds} s per mode, ${concurrency} in flight, node ${process.version}`);
  console.log(machineLine());
  const redis = await prepareRun();
  const { processes, supergraphPath } = await startSeededSubgraphs(redis.url);
  const subgraphs = Object.values(processes);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/graphql`;
  const gateway = await start('gateway', builtEntry('gateway'), [], { PORT: String(port), SUPERGRAPH_PATH: supergraphPath, REDIS_URL: redis.url, RATE_LIMIT_MAX: '1000000000', MAX_COMPLEXITY: '1000000' }, url.replace('/graphql', '/healthz'));
  const authorization = `Bearer ${await token('ADMIN', 'user-0000', { secret: SECRET })}`;
  const orderIds = sample(seedData().orders, 200, seededRandom(20261127)).map((order) => toGlobalId('Order', order.localId));

  const ask = async (mode: (typeof MODES)[number], id: string): Promise<unknown> => {
    const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: mode.accept, authorization }, body: JSON.stringify({ query: mode.query, variables: { id } }) });
    const text = await response.text();
    if (response.status !== 200) throw new Error(`${mode.name}: ${response.status} ${text.slice(0, 300)}`);
    return assembledData(response.headers.get('content-type') ?? '', text);
  };
  // Every mode's answer to every order, put together, is the whole answer to it.
  const expected = new Map<string, string>();
  for (const id of orderIds) expected.set(id, canonicalJson(JSON.stringify(await ask(MODES[0], id))));
  for (const mode of MODES.slice(1)) {
    for (const id of orderIds) {
      if (canonicalJson(JSON.stringify(await ask(mode, id))) !== expected.get(id)) throw new Error(`${mode.name} answers ${id} differently once put together`);
    }
  }
  console.log(`every mode answers all ${orderIds.length} orders alike once put together`);

  const subgraphCpu = () => subgraphs.reduce((sum, child) => sum + processCpuMs(child.pid!), 0);
  const totals = new Map(MODES.map((mode) => [mode.name, { requests: 0, ms: 0, gatewayCpu: 0, subgraphCpu: 0, mismatches: 0, peakRss: 0, latencies: [] as number[] }]));
  for (let round = -1; round < rounds; round++) {
    for (const mode of round % 2 === 0 ? [...MODES].reverse() : MODES) {
      const random = seededRandom(1000 + round);
      const total = totals.get(mode.name)!;
      const [cpu0, subgraphCpu0, started] = [processCpuMs(gateway.pid!), subgraphCpu(), performance.now()];
      const deadline = started + seconds * 1000;
      let requests = 0;
      let mismatches = 0;
      const latencies: number[] = [];
      const sampler = setInterval(() => (total.peakRss = Math.max(total.peakRss, processRssMb(gateway.pid!))), 100);
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (performance.now() < deadline) {
            const id = orderIds[Math.floor(random() * orderIds.length)]!;
            const sent = performance.now();
            const answer = await ask(mode, id).catch(() => undefined);
            latencies.push(performance.now() - sent);
            requests++;
            if (answer === undefined || canonicalJson(JSON.stringify(answer)) !== expected.get(id)) mismatches++;
          }
        }),
      );
      clearInterval(sampler);
      if (round < 0) continue; // the warm-up round
      total.requests += requests;
      total.ms += performance.now() - started;
      total.gatewayCpu += processCpuMs(gateway.pid!) - cpu0;
      total.subgraphCpu += subgraphCpu() - subgraphCpu0;
      total.mismatches += mismatches;
      total.latencies.push(...latencies);
      process.stdout.write(`  round ${round + 1}: ${mode.name}: ${((requests * 1000) / (performance.now() - started)).toFixed(0)} req/s\n`);
    }
  }

  const base = totals.get(MODES[0].name)!;
  const baseCpu = base.gatewayCpu / base.requests;
  console.log(`\n| mode | req/s | gateway CPU ms/req | vs whole | subgraph CPU ms/req | p99 ms | peak RSS MB | wrong answers |`);
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const [name, total] of totals) {
    const sorted = total.latencies.sort((a, b) => a - b);
    const cpu = total.gatewayCpu / total.requests;
    console.log(
      `| ${name} | ${((total.requests * 1000) / total.ms).toFixed(0)} | ${cpu.toFixed(2)} | ${(cpu / baseCpu).toFixed(2)}x | ${(total.subgraphCpu / total.requests).toFixed(2)} | ${sorted[Math.floor(sorted.length * 0.99)]!.toFixed(1)} | ${total.peakRss.toFixed(0)} | ${total.mismatches} |`,
    );
  }
  console.log(`\nload average at the end: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  await stopAll();
  await redis.close();
}

main().catch(async (error: unknown) => {
  console.error(error);
  await stopAll(3_000);
  process.exit(1);
});
