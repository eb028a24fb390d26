// npm run bench: our Hive Gateway against @apollo/gateway (DESIGN's baseline), side by side in one run, serving the
// same supergraph in front of the same subgraphs. Rounds alternate between the two so that the noise of a shared
// machine falls on both alike. Prints requests per second and latency percentiles per gateway, and the ratios.
import { performance } from 'node:perf_hooks';
import { toGlobalId } from '@ordergraph/common';
import { graphql, token } from '@ordergraph/testkit';
import { startApolloGateway } from '../e2e/apollo-gateway.js';
import { startSupergraph } from '../e2e/harness.js';

const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 3);
const REQUESTS = Number(process.env['BENCH_REQUESTS'] ?? 1000);
const CONCURRENCY = Number(process.env['BENCH_CONCURRENCY'] ?? 16);

const scenarios = [
  { name: 'one subgraph: product by id', query: `query Product($id: ID!) { product(id: $id) { id name currentPrice } }`, variables: { id: toGlobalId('Product', 'product-0007') } },
  {
    name: 'three subgraphs: a user with 20 orders, their items and products',
    query: `query Orders($id: ID!) { user(id: $id) { name orders(limit: 20) { id status total user { name } items { quantity product { name } } } } }`,
    variables: { id: toGlobalId('User', 'user-0001') },
  },
];

interface Sample {
  seconds: number;
  latencies: number[];
}

async function run(url: string, query: string, variables: Record<string, unknown>, authorization: string): Promise<Sample> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < REQUESTS) {
        next += 1;
        const t0 = performance.now();
        const { status, body } = await graphql(url, query, { variables, token: authorization });
        if (status !== 200 || body.errors) throw new Error(`${url}: ${status} ${JSON.stringify(body.errors)}`);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  return { seconds: (performance.now() - started) / 1000, latencies };
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

function summary(samples: Sample[]) {
  const latencies = samples.flatMap((sample) => sample.latencies).sort((a, b) => a - b);
  const seconds = samples.reduce((sum, sample) => sum + sample.seconds, 0);
  return { rps: latencies.length / seconds, p50: percentile(latencies, 50), p95: percentile(latencies, 95), p99: percentile(latencies, 99) };
}

// Limits high enough that the benchmark measures routing, not refusals; authenticated, so no response is cached.
const supergraph = await startSupergraph({ gatewayEnv: { RATE_LIMIT_MAX: '100000000', MAX_COMPLEXITY: '100000' } });
const apollo = await startApolloGateway(supergraph.sdl);
const admin = await token('ADMIN', 'user-0000');
const gateways = [
  { name: 'Hive Gateway (ours)', url: supergraph.url },
  { name: '@apollo/gateway', url: apollo.url },
];
console.log(`${ROUNDS} rounds x ${REQUESTS} requests, concurrency ${CONCURRENCY}, node ${process.version}`);
try {
  for (const scenario of scenarios) {
    const samples = new Map(gateways.map((gateway) => [gateway.name, [] as Sample[]]));
    for (const gateway of gateways) await run(gateway.url, scenario.query, scenario.variables, admin); // warm-up
    for (let round = 0; round < ROUNDS; round++) {
      for (const gateway of round % 2 === 0 ? gateways : [...gateways].reverse()) {
        samples.get(gateway.name)!.push(await run(gateway.url, scenario.query, scenario.variables, admin));
        process.stdout.write('.');
      }
    }
    console.log(`\n${scenario.name}`);
    const results = gateways.map((gateway) => ({ gateway: gateway.name, ...summary(samples.get(gateway.name)!) }));
    for (const result of results) {
      console.log(`  ${result.gateway.padEnd(22)} ${result.rps.toFixed(0).padStart(6)} req/s   p50 ${result.p50.toFixed(1)} ms   p95 ${result.p95.toFixed(1)} ms   p99 ${result.p99.toFixed(1)} ms`);
    }
    const [ours, theirs] = results as [(typeof results)[0], (typeof results)[0]];
    console.log(`  ratio ours/@apollo/gateway: throughput ${(ours.rps / theirs.rps).toFixed(2)}x, p50 ${(ours.p50 / theirs.p50).toFixed(2)}x, p95 ${(ours.p95 / theirs.p95).toFixed(2)}x`);
  }
} finally {
  await apollo.stop();
  await supergraph.stop();
}
