// npm run bench:fanout: how order events fan out to N subscribers (issue 17). Redis, the seeded subgraphs, two
// orders instances, two gateway replicas (or one of each, --replicas 1) and the subscribers (child processes of their own) all run apart; each
// subscriber must receive every created order exactly once. `npm run bench:fanout -- --help` lists the options.
import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { composeSupergraph, readSupergraphConfig } from '@ordergraph/composition';
import { toGlobalId } from '@ordergraph/core';
import { freePort, readCounter, redisClient, redisSubscriptions, startRedis, token, type TestRedis } from '@ordergraph/testkit';
import { formatSelfTimes, selfTimes } from './cpu-profile.js';
import { SELECTIONS, addTallies, emptyTally, summarise, type FromSubscribers, type Selection, type LatencySummary, type SubscriberPlan, type Tally, type ToSubscribers } from './fanout-tally.js';
import { processConnections, processCpuMs, processRssMb } from './process-stats.js';
import { ROOT, SECRET, buildEntries, builtEntry, forkScript, start, stop, stopAll, stopOnSignals } from './processes.js';

const { values: options } = parseArgs({
  options: {
    subscribers: { type: 'string', default: '100,1000,5000' },
    events: { type: 'string', default: '50' },
    interval: { type: 'string', default: '200' },
    identities: { type: 'string', default: '0' },
    selection: { type: 'string', default: 'basic' },
    'subscriber-processes': { type: 'string', default: '2' },
    'connect-rate': { type: 'string', default: '200' },
    drain: { type: 'string', default: '30' },
    replicas: { type: 'string', default: '2' },
    profile: { type: 'string' },
    readme: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});
if (options.help) {
  console.log(`npm run bench:fanout -- [--subscribers 100,1000,5000] [--events 50] [--interval 200] [--identities 0] [--selection basic|cross] [--replicas 1|2] [--profile <dir>]
  subscribers           subscriber counts, one run each (fresh orders instances and gateways every time); half of
                        them over graphql-ws, half over SSE (graphql-sse), spread evenly over the gateway replicas
  replicas              gateway replicas, each in front of an orders instance of its own: 2, or 1 to measure what one
                        replica carries alone
  events                createOrder mutations per run, sent through the first replica, one every --interval ms
  identities            0: each subscriber signs in as an ADMIN of its own; K: the subscribers share K ADMIN identities
  selection             basic: ${SELECTIONS.basic}
                        cross: ${SELECTIONS.cross}
  subscriber-processes  child processes the subscribers are spread over
  connect-rate          subscribers opened per second, all processes together
  drain                 seconds to wait, after the last mutation, for deliveries that have not arrived (then: lost)
  profile               a directory: the gateways run under node --cpu-prof and write their CPU profiles into
                        <dir>/<N>-gateway-<a|b>; each one's top self times are printed at the end
  readme                replace the figures of this kind of run (selection; distinct or shared identities) in
                        bench/README.md's "Subscription fan-out" section with this run's`);
  process.exit(0);
}

const SIZES = options.subscribers.split(',').map(Number);
const EVENTS = Number(options.events);
const INTERVAL = Number(options.interval);
const IDENTITIES = Number(options.identities);
const SUBSCRIBER_PROCESSES = Number(options['subscriber-processes']);
const DRAIN_MS = Number(options.drain) * 1000;
const CONNECT_RATE = Number(options['connect-rate']);
const REPLICAS = Number(options.replicas);
if (REPLICAS !== 1 && REPLICAS !== 2) throw new Error(`--replicas is 1 or 2, not ${options.replicas}`);
const REPLICA_NAMES = ['a', 'b'].slice(0, REPLICAS);
if (!(options.selection in SELECTIONS)) throw new Error(`--selection is basic or cross, not ${options.selection}`);
const SELECTION = options.selection as Selection;
const QUERY = `subscription FanOut { ${SELECTIONS[SELECTION]} }`;
if ([...SIZES, EVENTS, INTERVAL, IDENTITIES, SUBSCRIBER_PROCESSES, DRAIN_MS, CONNECT_RATE].some((n) => !Number.isInteger(n) || n < 0) || SIZES.includes(0) || SUBSCRIBER_PROCESSES < 1 || CONNECT_RATE < 1) {
  throw new Error('--subscribers, --events, --interval, --identities, --subscriber-processes, --connect-rate and --drain take whole numbers (subscribers, processes and rate at least 1)');
}

const ADMIN = 'user-0000'; // the seeded administrator: places every order, so that `user { name }` resolves
/** Orders placed before anyone subscribes: the first warm createOrder up, the others say what it costs alone. */
const WARMUP_ORDERS = 10;
const BASELINE_ORDERS = 20;
const CREATE = 'mutation PlaceOrder($input: CreateOrderInput!) { createOrder(input: $input) { id createdAt } }';
const pad = (n: number) => String(n).padStart(4, '0');
const monotonicMicros = () => Number(process.hrtime.bigint() / 1000n);
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));
const log = (line: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${line}`);
const load = () => loadavg().map((l) => l.toFixed(2)).join(' ');

interface Endpoint {
  name: string;
  port: number;
  url: string;
  process?: ChildProcess;
}

const base = (endpoint: Endpoint) => endpoint.url.replace('/graphql', '');
const pidOf = (endpoint: Endpoint) => endpoint.process!.pid!;
const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);
const gauge = (endpoint: Endpoint, name: string) => readCounter(`${base(endpoint)}/metrics`, name);

interface Row {
  subscribers: number;
  /** createOrder mutations that succeeded. */
  events: number;
  expected: number;
  tally: Tally;
  latency: LatencySummary;
  mutationMs: LatencySummary;
  gatewayCpuUs: number;
  ordersCpuUs: number;
  /** users and catalog together: what cross-subgraph fields cost them. */
  peersCpuUs: number;
  /** The subscriber processes: if they are busy, latencies are partly theirs. */
  subscribersCpuUs: number;
  gatewaySubscribeCpuMs: number;
  /** The event phase on the monotonic clock (µs), to read the gateways' CPU profiles over it alone. */
  eventWindow: { from: number; to: number };
  /** CPU of one createOrder with no subscriber, in the gateways and in orders (warm-up orders before subscribing). */
  createOrderCpuMs: { gateway: number; orders: number };
  gatewayRssMb: number[];
  ordersRssMb: number[];
  redisClients: number;
  upstream: { orders: number; users: number; catalog: number }[];
}

/** Places an order through `gateway` as the seeded administrator; returns its ID. */
async function placeOrder(gateway: Endpoint, authorization: string, k: number): Promise<string> {
  const input = { items: [{ productId: toGlobalId('Product', `product-${pad(k % 200)}`), quantity: 1 + (k % 3) }] };
  const response = await fetch(gateway.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization },
    body: JSON.stringify({ query: CREATE, variables: { input } }),
  });
  const body = (await response.json()) as { data?: { createOrder?: { id: string } }; errors?: unknown };
  if (!body.data?.createOrder) throw new Error(`createOrder: ${response.status} ${JSON.stringify(body.errors)}`);
  return body.data.createOrder.id;
}

/** The `connected_clients` of Redis's INFO clients, not counting the connection that asks. */
async function redisClients(url: string): Promise<number> {
  const redis = redisClient(url);
  try {
    const info = await redis.info('clients');
    return Number(/^connected_clients:(\d+)/m.exec(info)?.[1] ?? Number.NaN) - 1;
  } finally {
    redis.disconnect();
  }
}

/** With --profile, where gateway `i` of the run with `n` subscribers writes its CPU profile. */
const profileDir = (n: number, i: number) => resolve(options.profile!, `${n}-gateway-${REPLICA_NAMES[i]}`);
const profiled = (n: number, i: number) => (options.profile ? ['--cpu-prof', `--cpu-prof-dir=${profileDir(n, i)}`] : []);

/** Who subscriber `i` is: transports alternate, replicas alternate in pairs, and K shared identities span both. */
function plan(i: number, gateways: Endpoint[]): SubscriberPlan {
  const identity = IDENTITIES > 0 ? `user-${pad(1 + (Math.floor(i / 4) % IDENTITIES))}` : `user-${pad(1 + i)}`;
  return { transport: i % 2 === 0 ? 'ws' : 'sse', url: gateways[Math.floor(i / 2) % gateways.length]!.url, identity };
}

/** Polls `check` every 500 ms, printing its state every 2 s, until it holds or nothing has changed for `stallMs`. */
async function until(check: () => Promise<{ done: boolean; state: string }>, stallMs: number): Promise<boolean> {
  let last = '';
  let changed = Date.now();
  let printed = 0;
  for (;;) {
    const { done, state } = await check();
    if (state !== last) [last, changed] = [state, Date.now()];
    if (done || Date.now() - printed > 2000) {
      log(`  ${state}`);
      printed = Date.now();
    }
    if (done) return true;
    if (Date.now() - changed > stallMs) return false;
    await sleep(500);
  }
}

async function runSize(n: number, ports: { orders: number[]; gateways: number[]; users: number; catalog: number }, supergraphs: string[], redis: TestRedis, peers: ChildProcess[]): Promise<Row> {
  const catalogUrl = `http://127.0.0.1:${ports.catalog}/graphql`;
  const orders: Endpoint[] = ports.orders.map((port, i) => ({ name: `orders ${'AB'[i]}`, port, url: `http://127.0.0.1:${port}/graphql` }));
  const gateways: Endpoint[] = ports.gateways.map((port, i) => ({ name: `gateway ${'AB'[i]}`, port, url: `http://127.0.0.1:${port}/graphql` }));
  const names = REPLICA_NAMES.map((name) => name.toUpperCase()).join(' and ');
  log(`N = ${n}: starting orders ${names}, gateways ${names}`);
  for (const endpoint of orders) {
    endpoint.process = await start(endpoint.name, builtEntry('services/orders'), [], {
      PORT: String(endpoint.port), SEED: 'true', CATALOG_URL: catalogUrl, REDIS_URL: redis.url, SHUTDOWN_DELAY: '0',
    }, `${base(endpoint)}/healthz`);
  }
  for (const [i, endpoint] of gateways.entries()) {
    endpoint.process = await start(endpoint.name, builtEntry('gateway'), [], {
      PORT: String(endpoint.port), SUPERGRAPH_PATH: supergraphs[i]!, REDIS_URL: redis.url, SHUTDOWN_DELAY: '0',
      // High enough that the benchmark measures delivery, not refusals (every subscriber comes from 127.0.0.1).
      RATE_LIMIT_MAX: '1000000000', MAX_COMPLEXITY: '1000000',
    }, `${base(endpoint)}/healthz`, { execArgv: profiled(n, i) });
  }
  const measured = [...gateways, ...orders];
  const peakRss = new Map(measured.map((endpoint) => [endpoint.name, 0]));
  const sampleRss = () => {
    for (const endpoint of measured) {
      // A process gone (Ctrl-C, a crash) has no /proc entry: the run is ending anyway.
      if (endpoint.process!.exitCode === null && endpoint.process!.signalCode === null) {
        peakRss.set(endpoint.name, Math.max(peakRss.get(endpoint.name)!, processRssMb(pidOf(endpoint))));
      }
    }
  };
  const rssSampler = setInterval(sampleRss, 100);
  const cpu = (endpoints: Endpoint[]) => sum(endpoints.map((endpoint) => processCpuMs(pidOf(endpoint))));
  const cpuOf = (processes: ChildProcess[]) => sum(processes.map((child) => processCpuMs(child.pid!)));

  const plans = Array.from({ length: n }, (_, i) => plan(i, gateways));
  const processes = Math.min(SUBSCRIBER_PROCESSES, n);
  const children = Array.from({ length: processes }, () => forkScript('bench/fanout-subscribers.ts', [], { env: { NODE_ENV: 'production' } }));
  const progress = children.map((): Extract<FromSubscribers, { type: 'progress' }> => ({ type: 'progress', subscribed: 0, distinct: 0, ended: 0 }));
  const results = children.map(
    (child, i) =>
      new Promise<Extract<FromSubscribers, { type: 'result' }>>((done, fail) => {
        child.on('message', (message: FromSubscribers) => (message.type === 'progress' ? (progress[i] = message) : done(message)));
        child.once('exit', (code) => fail(new Error(`subscriber process ${i + 1} exited with ${code} before reporting`)));
      }),
  );
  results.forEach((result) => result.catch(() => {})); // awaited below; a failure then is reported there
  const total = (key: 'subscribed' | 'distinct' | 'ended') => sum(progress.map((p) => p[key]));

  try {
    // What createOrder costs with no one listening (also warming its path up): part of every figure per delivery.
    const authorization = `Bearer ${await token('ADMIN', ADMIN, { secret: SECRET })}`;
    for (let k = 0; k < WARMUP_ORDERS; k++) await placeOrder(gateways[0]!, authorization, k);
    const [warmGateways, warmOrders] = [cpu(gateways), cpu(orders)];
    for (let k = 0; k < BASELINE_ORDERS; k++) await placeOrder(gateways[0]!, authorization, k);
    const createOrderCpuMs = { gateway: (cpu(gateways) - warmGateways) / BASELINE_ORDERS, orders: (cpu(orders) - warmOrders) / BASELINE_ORDERS };

    // Subscribe, and wait until every stream is open on the gateways, upstream on orders and on Redis.
    const gatewayCpu0 = cpu(gateways);
    children.forEach((child, i) => {
      const message: ToSubscribers = { type: 'subscribe', subscribers: plans.filter((_, j) => j % processes === i), query: QUERY, secret: SECRET, perSecond: CONNECT_RATE / processes };
      child.send(message);
    });
    let ordersStreams = -1;
    let ordersSteady = 0;
    const open = await until(async () => {
      const atGateways = await Promise.all(gateways.map((gateway) => gauge(gateway, 'graphql_active_subscriptions')));
      const atOrders = await Promise.all(orders.map((endpoint) => gauge(endpoint, 'graphql_active_subscriptions')));
      const redisSubscribers = await redisSubscriptions(redis.url, 'ordergraph:order-created');
      // With deduplicated upstreams orders may hold fewer streams than there are subscribers: it is settled once the
      // count has stayed the same for a second.
      ordersSteady = sum(atOrders) === ordersStreams && sum(atOrders) > 0 ? ordersSteady + 1 : 0;
      ordersStreams = sum(atOrders);
      const done = sum(atGateways) === n && ordersSteady >= 2 && redisSubscribers === orders.length;
      return {
        done,
        state: `subscribers: ${total('subscribed')}/${n} subscribed, ${total('ended')} ended; streams on gateways ${atGateways.join(' + ')}, on orders ${atOrders.join(' + ')}; Redis subscribers of the creation channel ${redisSubscribers}`,
      };
    }, 60_000);
    if (!open) log(`  not every subscription opened within a minute of the last change: carrying on (those missing will count as lost)`);
    const gatewaySubscribeCpuMs = (cpu(gateways) - gatewayCpu0) / n;

    // The events: createOrder through replica A on a fixed schedule (a slow answer does not delay the next).
    const created: string[] = [];
    const mutationMs: number[] = [];
    let failedMutations = 0;
    let snapshot: Pick<Row, 'redisClients' | 'upstream'> | undefined;
    const takeSnapshot = async () => {
      snapshot = {
        redisClients: await redisClients(redis.url),
        upstream: gateways.map((gateway) => {
          const counts = processConnections(pidOf(gateway), [ports.orders[gateways.indexOf(gateway)]!, ports.users, ports.catalog]);
          return { orders: counts.get(ports.orders[gateways.indexOf(gateway)]!)!, users: counts.get(ports.users)!, catalog: counts.get(ports.catalog)! };
        }),
      };
    };
    const [gatewayCpu1, ordersCpu1, peersCpu1, subscribersCpu1] = [cpu(gateways), cpu(orders), cpuOf(peers), cpuOf(children)];
    const started = Date.now();
    const eventsFrom = monotonicMicros();
    const sends = Array.from({ length: EVENTS }, async (_, k) => {
      await sleep(started + k * INTERVAL - Date.now());
      const sent = performance.now();
      try {
        created.push(await placeOrder(gateways[0]!, authorization, k));
        mutationMs.push(performance.now() - sent);
      } catch (error) {
        if (failedMutations++ === 0) log(`  createOrder failed: ${String(error)}`);
      }
      if (k === Math.floor(EVENTS / 2)) await takeSnapshot();
    });
    const reporter = setInterval(() => {
      log(`  events: ${created.length + failedMutations}/${EVENTS} sent (${failedMutations} failed); deliveries ${total('distinct')}/${n * created.length}, ${total('ended')} streams ended`);
    }, 2000);
    await Promise.all(sends);
    clearInterval(reporter);
    if (!snapshot) await takeSnapshot();
    const expected = n * created.length;
    const delivered = await until(
      async () => ({ done: total('distinct') >= expected, state: `events: all ${EVENTS} sent (${failedMutations} failed); deliveries ${total('distinct')}/${expected}` }),
      DRAIN_MS,
    );
    if (!delivered) log(`  no delivery for ${DRAIN_MS / 1000} s: the rest count as lost`);
    await sleep(500); // a late duplicate still counts
    const [gatewayCpu2, ordersCpu2, peersCpu2, subscribersCpu2] = [cpu(gateways), cpu(orders), cpuOf(peers), cpuOf(children)];
    const eventWindow = { from: eventsFrom, to: monotonicMicros() };
    sampleRss();

    children.forEach((child) => child.send({ type: 'finish', created } satisfies ToSubscribers));
    const reports = await Promise.all(results);
    const tally = reports.reduce((sum, report) => addTallies(sum, report.tally), emptyTally());
    const deliveries = Math.max(1, tally.delivered);
    return {
      subscribers: n,
      events: created.length,
      expected,
      tally,
      latency: summarise(reports.flatMap((report) => report.latencies)),
      mutationMs: summarise(mutationMs),
      gatewayCpuUs: ((gatewayCpu2 - gatewayCpu1) * 1000) / deliveries,
      ordersCpuUs: ((ordersCpu2 - ordersCpu1) * 1000) / deliveries,
      peersCpuUs: ((peersCpu2 - peersCpu1) * 1000) / deliveries,
      subscribersCpuUs: ((subscribersCpu2 - subscribersCpu1) * 1000) / deliveries,
      gatewaySubscribeCpuMs,
      createOrderCpuMs,
      eventWindow,
      gatewayRssMb: gateways.map((gateway) => peakRss.get(gateway.name)!),
      ordersRssMb: orders.map((endpoint) => peakRss.get(endpoint.name)!),
      ...snapshot!,
    };
  } finally {
    clearInterval(rssSampler);
    await Promise.all(children.map((child) => stop(child, 2_000)));
    for (const group of [gateways, orders]) await Promise.all(group.flatMap((endpoint) => (endpoint.process ? [stop(endpoint.process)] : [])));
  }
}

/** How the table's per-replica columns are headed: `A / B`, or `A` alone. */
const REPLICA_LABEL = REPLICA_NAMES.map((name) => name.toUpperCase()).join(' / ');
const ms = (value: number) => value.toFixed(0);
const mb = (values: number[]) => values.map((value) => value.toFixed(0)).join(' / ');

/** CPU per delivery without the events' own createOrder (as measured with no one subscribed). */
const net = (row: Row, of: 'gateway' | 'orders') =>
  ((of === 'gateway' ? row.gatewayCpuUs : row.ordersCpuUs) - (row.events * row.createOrderCpuMs[of] * 1000) / Math.max(1, row.tally.delivered)).toFixed(0);

function renderRows(rows: Row[]): string {
  const lines = [
    `| subscribers (half ws, half SSE) | delivered / expected | lost | duplicated | foreign | errors | streams ended | p50 ms | p99 ms | max ms | gateway CPU µs/delivery (net of createOrder) | orders CPU µs/delivery (net of createOrder) | users + catalog CPU µs/delivery | subscriber processes CPU µs/delivery | gateway CPU ms/subscribe | createOrder alone: gateway / orders CPU ms | peak RSS MB gateways ${REPLICA_LABEL} | peak RSS MB orders ${REPLICA_LABEL} | Redis clients | gateway→orders connections ${REPLICA_LABEL} | gateway→users, catalog ${REPLICA_LABEL} |`,
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const row of rows) {
    const t = row.tally;
    lines.push(
      `| ${row.subscribers} | ${t.delivered} / ${row.expected} | ${t.lost} | ${t.duplicated} | ${t.foreign} | ${t.errors} | ${t.ended} | ${ms(row.latency.p50)} | ${ms(row.latency.p99)} | ${ms(row.latency.max)} | ` +
        `${row.gatewayCpuUs.toFixed(0)} (${net(row, 'gateway')}) | ${row.ordersCpuUs.toFixed(0)} (${net(row, 'orders')}) | ${row.peersCpuUs.toFixed(0)} | ${row.subscribersCpuUs.toFixed(0)} | ${row.gatewaySubscribeCpuMs.toFixed(2)} | ${row.createOrderCpuMs.gateway.toFixed(1)} / ${row.createOrderCpuMs.orders.toFixed(1)} | ${mb(row.gatewayRssMb)} | ${mb(row.ordersRssMb)} | ${row.redisClients} | ` +
        `${row.upstream.map((u) => u.orders).join(' / ')} | ${row.upstream.map((u) => `${u.users}, ${u.catalog}`).join(' / ')} |`,
    );
  }
  return lines.join('\n');
}

/** bench/README.md keeps one block of figures per kind of run: the selection, distinct or shared identities, replicas. */
const README_BLOCK = `fanout-results ${SELECTION}, ${IDENTITIES > 0 ? 'shared' : 'distinct'} identities${REPLICAS === 1 ? ', one replica' : ''}`;
const README_START = `<!-- ${README_BLOCK}: start (npm run bench:fanout -- --readme replaces this block) -->`;
const README_END = `<!-- ${README_BLOCK}: end -->`;

/** Each profiled gateway's top self times over the event phase (it writes its profile as it exits). */
function printProfiles(rows: Row[]) {
  for (const { subscribers: n, eventWindow } of rows) {
    for (const i of REPLICA_NAMES.keys()) {
      const dir = profileDir(n, i);
      const newest = (existsSync(dir) ? readdirSync(dir).filter((file) => file.endsWith('.cpuprofile')) : [])
        .map((file) => resolve(dir, file))
        .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
      if (newest) console.log(`\nN = ${n}, gateway ${REPLICA_NAMES[i]!.toUpperCase()}: top self times over the event phase (${newest}, monotonic µs ${eventWindow.from}-${eventWindow.to})\n${formatSelfTimes(selfTimes(newest, 30, eventWindow))}`);
    }
  }
}

async function main() {
  const startedAt = new Date();
  const loadBefore = load();
  const command = `npm run bench:fanout -- ${process.argv.slice(2).filter((arg) => arg !== '--readme').join(' ')}`.trim();
  log(`fan-out benchmark: ${SIZES.join(', ')} subscribers on ${REPLICAS} gateway replica${REPLICAS === 1 ? '' : 's'}, ${EVENTS} events ${INTERVAL} ms apart, ${IDENTITIES > 0 ? `${IDENTITIES} shared` : 'distinct'} ADMIN identities, selection ${SELECTION}, ${SUBSCRIBER_PROCESSES} subscriber processes opening ${CONNECT_RATE} subscribers/s, node ${process.version}`);
  log(`machine: ${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, load average ${loadBefore}`);
  buildEntries();
  const redis = await startRedis();
  const freePorts = async () => { const ports: number[] = []; for (const _ of REPLICA_NAMES) ports.push(await freePort()); return ports; };
  const ports = { users: await freePort(), catalog: await freePort(), orders: await freePorts(), gateways: await freePorts() };
  const url = (port: number) => `http://127.0.0.1:${port}/graphql`;
  // Each gateway replica in front of an orders instance of its own (as the test kit's replicas run them), users and
  // the catalog shared; Redis carries each order event to both orders instances.
  const supergraphs = ports.orders.map((port, i) => {
    const path = resolve(tmpdir(), `ordergraph-fanout-supergraph-${'ab'[i]}.${process.pid}.graphql`);
    writeFileSync(path, composeSupergraph(readSupergraphConfig(), { users: url(ports.users), orders: url(port), catalog: url(ports.catalog) }));
    return path;
  });
  const cleanup = async () => {
    await stopAll(3_000);
    await redis.close();
    for (const path of supergraphs) rmSync(path, { force: true });
  };
  stopOnSignals(cleanup);
  const rows: Row[] = [];
  let failure: unknown;
  try {
    log('starting catalog and users (production mode, seeded embedded stores)');
    const catalog = await start('catalog', builtEntry('services/catalog'), [], { PORT: String(ports.catalog), SEED: 'true', SHUTDOWN_DELAY: '0' }, url(ports.catalog).replace('/graphql', '/healthz'));
    const users = await start('users', builtEntry('services/users'), [], {
      PORT: String(ports.users), SEED: 'true', ORDERS_URL: url(ports.orders[0]!), CATALOG_URL: url(ports.catalog), SHUTDOWN_DELAY: '0',
    }, url(ports.users).replace('/graphql', '/healthz'));
    for (const n of SIZES) {
      let row: Row;
      try {
        row = await runSize(n, ports, supergraphs, redis, [users, catalog]);
      } catch (error) {
        // The sizes measured so far are still reported; the larger ones are not attempted.
        failure = error;
        log(`N = ${n} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
        break;
      }
      rows.push(row);
      const t = row.tally;
      log(`N = ${n}: delivered ${t.delivered}/${row.expected}, lost ${t.lost}, duplicated ${t.duplicated}, foreign ${t.foreign}, errors ${t.errors}; latency from createdAt p50 ${ms(row.latency.p50)} ms, p99 ${ms(row.latency.p99)} ms, max ${ms(row.latency.max)} ms; createOrder round trip p50 ${ms(row.mutationMs.p50)} ms; gateway CPU ${row.gatewayCpuUs.toFixed(0)} µs and orders CPU ${row.ordersCpuUs.toFixed(0)} µs per delivery`);
    }
  } finally {
    log('stopping every process');
    await cleanup();
  }
  // A run smaller than the defaults says so, so that its figures are never read as the full-size ones.
  const small = Math.max(...SIZES) < 1000 || EVENTS < 50 ? '**Small-size run** (fewer subscribers or events than the full-size defaults). ' : '';
  const header =
    `${small}${startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC, ${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, node ${process.version}; ` +
    `load average ${loadBefore} before and ${load()} after. \`${command}\`: ${EVENTS} events ${INTERVAL} ms apart, ` +
    `${IDENTITIES > 0 ? `subscribers sharing ${IDENTITIES} ADMIN identities` : 'each subscriber an ADMIN identity of its own'}, \`${SELECTIONS[SELECTION]}\`, ${REPLICAS === 1 ? 'one gateway replica (one orders instance)' : 'two gateway replicas'}, ${SUBSCRIBER_PROCESSES} subscriber processes opening ${CONNECT_RATE} subscribers/s.`;
  const table = renderRows(rows);
  console.log(`\n${header}\n\n${table}`);
  if (options.profile) printProfiles(rows);
  if (options.readme && !failure) {
    const path = resolve(ROOT, 'bench/README.md');
    const text = readFileSync(path, 'utf8');
    const [from, to] = [text.indexOf(README_START), text.indexOf(README_END)];
    if (from < 0 || to < from) throw new Error(`bench/README.md has no ${README_START} ... ${README_END} block`);
    writeFileSync(path, `${text.slice(0, from + README_START.length)}\n${header}\n\n${table}\n${text.slice(to)}`);
    log(`figures written to bench/README.md (${README_BLOCK})`);
  }
  const wrong = rows.some((row) => row.tally.lost + row.tally.duplicated + row.tally.foreign + row.tally.errors > 0);
  if (wrong) console.error('some subscriber missed, repeated or received an event it should not have, or an error (see the table)');
  if (failure) console.error(`the run stopped early (see above)${options.readme ? '; bench/README.md was left as it was' : ''}`);
  process.exitCode = wrong || failure ? 1 : 0;
}

await main();
