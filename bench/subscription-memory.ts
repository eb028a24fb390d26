// npm run bench:subscription-memory: issue 17's memory target, "heap flat within 5 MB over 10,000 events with 1000 open
// subscriptions". Redis, users, catalog, one orders instance, one gateway and the subscribers (child processes of their
// own) all run apart; events are published straight into Redis on orders' creation channel at a fixed rate, and after a
// warm-up and after every round the gateway's and orders' heaps are read after a full collection, through their
// inspectors. `npm run bench:subscription-memory -- --help` lists the options.
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { composeSupergraph, readSupergraphConfig } from '@ordergraph/composition';
import { toGlobalId } from '@ordergraph/core';
import { CREATED_CHANNEL } from '@ordergraph/orders';
import { freePort, readCounter, redisClient, redisSubscriptions, startRedis } from '@ordergraph/testkit';
import { SELECTIONS, type Selection, type SubscriberPlan } from './fanout-tally.js';
import { compareHeaps } from './heap-snapshot.js';
import { attachInspector, type HeapFigures, type Inspector } from './inspector.js';
import { ROOT, SECRET, buildEntries, builtEntry, forkScript, start, stop, stopAll, stopOnSignals } from './processes.js';
import type { FromMemorySubscribers, MemoryTally, ToMemorySubscribers } from './subscription-memory-subscribers.js';

const { values: options } = parseArgs({
  options: {
    subscribers: { type: 'string', default: '1000' },
    events: { type: 'string', default: '10000' },
    rate: { type: 'string', default: '10' },
    round: { type: 'string', default: '2000' },
    warmup: { type: 'string', default: '200' },
    selection: { type: 'string', default: 'basic' },
    'subscriber-processes': { type: 'string', default: '2' },
    'connect-rate': { type: 'string', default: '200' },
    drain: { type: 'string', default: '30' },
    snapshots: { type: 'string' },
    readme: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});
if (options.help) {
  console.log(`npm run bench:subscription-memory -- [--subscribers 1000] [--events 10000] [--rate 10] [--round 2000] [--warmup 200] [--selection basic|cross]
  subscribers           open subscriptions, half over graphql-ws, half over SSE, each an ADMIN identity of its own
  events                events published after the warm-up, straight into Redis on orders' creation channel
  rate                  events published per second (every subscriber receives each: rate x subscribers deliveries/s)
  round                 events between two heap readings
  warmup                events published before the first reading (caches filled, hot code compiled)
  selection             basic: ${SELECTIONS.basic}
                        cross: ${SELECTIONS.cross}
  subscriber-processes  child processes the subscribers are spread over
  connect-rate          subscribers opened per second, all processes together
  drain                 seconds without a new delivery, after a round is published, before the rest count as lost
  snapshots             a directory: heap snapshots of the gateway and orders after the warm-up and at the end are
                        written there, and what the end holds more of is printed
  readme                replace the figures of this selection in bench/README.md's "Subscription memory" section with
                        this run's`);
  process.exit(0);
}

const SUBSCRIBERS = Number(options.subscribers);
const EVENTS = Number(options.events);
const RATE = Number(options.rate);
const ROUND = Number(options.round);
const WARMUP = Number(options.warmup);
const SUBSCRIBER_PROCESSES = Number(options['subscriber-processes']);
const CONNECT_RATE = Number(options['connect-rate']);
const DRAIN_MS = Number(options.drain) * 1000;
if (!(options.selection in SELECTIONS)) throw new Error(`--selection is basic or cross, not ${options.selection}`);
const SELECTION = options.selection as Selection;
const QUERY = `subscription SubscriptionMemory { ${SELECTIONS[SELECTION]} }`;
if ([SUBSCRIBERS, EVENTS, RATE, ROUND, WARMUP, SUBSCRIBER_PROCESSES, CONNECT_RATE, DRAIN_MS].some((n) => !Number.isInteger(n) || n < 0) || [SUBSCRIBERS, EVENTS, RATE, ROUND, SUBSCRIBER_PROCESSES, CONNECT_RATE].includes(0)) {
  throw new Error('every option but --selection, --snapshots and --readme takes a whole number (only --warmup and --drain may be 0)');
}
/** issue 17's bound on growth over the run. */
const TARGET_MB = 5;

const ADMIN = 'user-0000'; // the seeded administrator owns every event's order, so that `user { name }` resolves
const pad = (n: number) => String(n).padStart(4, '0');
const sleep = (ms: number) => new Promise((done) => setTimeout(done, Math.max(0, ms)));
const log = (line: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${line}`);
const load = () => loadavg().map((l) => l.toFixed(2)).join(' ');
const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);
const MB = 2 ** 20;

/**
 * Event `k`: a new order of the administrator as orders publishes it on commit (JSON of the stored document), numbered
 * `bench-<k>` so that each subscriber can tick it off, with a seeded product so that `--selection cross` resolves.
 */
function orderEvent(k: number): string {
  const now = new Date().toISOString();
  const item = { productId: toGlobalId('Product', `product-${pad(k % 200)}`), quantity: 1 + (k % 3), unitPriceCents: 100 };
  return JSON.stringify({ _id: `bench-${k}`, userId: toGlobalId('User', ADMIN), status: 'PENDING', items: [item], totalCents: 100 * item.quantity, version: 1, createdAt: now, updatedAt: now });
}

interface Measured {
  name: 'gateway' | 'orders';
  process: ChildProcess;
  inspector: Inspector;
}

/** One heap reading: after the warm-up, or after a round. */
interface Reading {
  label: string;
  /** Events published so far after the warm-up. */
  events: number;
  /** Distinct deliveries so far, warm-up included, over every subscriber. */
  delivered: number;
  gateway: HeapFigures;
  orders: HeapFigures;
  /** The round: the largest backlog of the slowest subscriber (events published, not yet received), the seconds from
   * the round's last publish until every subscriber had every event, and the seconds its publishing took. */
  slowestBacklog: number;
  catchUpS: number;
  publishS: number;
}

async function main() {
  const startedAt = new Date();
  const loadBefore = load();
  const command = `npm run bench:subscription-memory -- ${process.argv.slice(2).filter((arg) => arg !== '--readme').join(' ')}`.trim();
  log(`subscription memory: ${SUBSCRIBERS} subscribers, ${WARMUP} warm-up events then ${EVENTS} in rounds of ${ROUND}, ${RATE} events/s, selection ${SELECTION}, node ${process.version}`);
  log(`machine: ${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, load average ${loadBefore}`);
  buildEntries();
  const redis = await startRedis();
  const ports = { users: await freePort(), catalog: await freePort(), orders: await freePort(), gateway: await freePort(), gatewayInspector: await freePort(), ordersInspector: await freePort() };
  const url = (port: number) => `http://127.0.0.1:${port}/graphql`;
  const healthz = (port: number) => `http://127.0.0.1:${port}/healthz`;
  const supergraph = resolve(tmpdir(), `ordergraph-subscription-memory-supergraph.${process.pid}.graphql`);
  writeFileSync(supergraph, composeSupergraph(readSupergraphConfig(), { users: url(ports.users), orders: url(ports.orders), catalog: url(ports.catalog) }));
  const measured: Measured[] = [];
  const publisher = redisClient(redis.url);
  const cleanup = async () => {
    for (const { inspector } of measured) inspector.close();
    publisher.disconnect();
    await stopAll(3_000);
    await redis.close();
    rmSync(supergraph, { force: true });
  };
  stopOnSignals(cleanup);

  const readings: Reading[] = [];
  let final: (MemoryTally & { lost: number }) | undefined;
  let published = 0; // events published, warm-up included: event k is bench-<k>
  let failure: unknown;
  let heapDiff = '';
  try {
    log('starting catalog, users, orders and the gateway (built, production mode, seeded embedded stores)');
    await start('catalog', builtEntry('services/catalog'), [], { PORT: String(ports.catalog), SEED: 'true', SHUTDOWN_DELAY: '0' }, healthz(ports.catalog));
    await start('users', builtEntry('services/users'), [], { PORT: String(ports.users), SEED: 'true', ORDERS_URL: url(ports.orders), CATALOG_URL: url(ports.catalog), SHUTDOWN_DELAY: '0' }, healthz(ports.users));
    const orders = await start('orders', builtEntry('services/orders'), [], {
      PORT: String(ports.orders), SEED: 'true', CATALOG_URL: url(ports.catalog), REDIS_URL: redis.url, SHUTDOWN_DELAY: '0',
    }, healthz(ports.orders), { execArgv: [`--inspect=127.0.0.1:${ports.ordersInspector}`] });
    const gateway = await start('gateway', builtEntry('gateway'), [], {
      PORT: String(ports.gateway), SUPERGRAPH_PATH: supergraph, REDIS_URL: redis.url, SHUTDOWN_DELAY: '0',
      // High enough that the benchmark measures delivery, not refusals (every subscriber comes from 127.0.0.1).
      RATE_LIMIT_MAX: '1000000000', MAX_COMPLEXITY: '1000000',
    }, healthz(ports.gateway), { execArgv: [`--inspect=127.0.0.1:${ports.gatewayInspector}`] });
    measured.push({ name: 'gateway', process: gateway, inspector: await attachInspector(ports.gatewayInspector) });
    measured.push({ name: 'orders', process: orders, inspector: await attachInspector(ports.ordersInspector) });

    // The subscribers: transports alternate, each its own ADMIN identity (user-0001, user-0002, ...).
    const plans: SubscriberPlan[] = Array.from({ length: SUBSCRIBERS }, (_, i) => ({ transport: i % 2 === 0 ? 'ws' : 'sse', url: url(ports.gateway), identity: `user-${pad(1 + i)}` }));
    const processes = Math.min(SUBSCRIBER_PROCESSES, SUBSCRIBERS);
    const children = Array.from({ length: processes }, () => forkScript('bench/subscription-memory-subscribers.ts', [], { env: { NODE_ENV: 'production' } }));
    const progress = children.map((): Extract<FromMemorySubscribers, { type: 'progress' }> => ({
      type: 'progress', subscribed: 0, tally: { subscribers: 0, delivered: 0, slowest: 0, duplicated: 0, foreign: 0, errors: 0, ended: 0 },
    }));
    const results = children.map(
      (child, i) =>
        new Promise<Extract<FromMemorySubscribers, { type: 'result' }>>((done, fail) => {
          child.on('message', (message: FromMemorySubscribers) => (message.type === 'progress' ? (progress[i] = message) : done(message)));
          child.once('exit', (code) => fail(new Error(`subscriber process ${i + 1} exited with ${code} before reporting`)));
        }),
    );
    results.forEach((result) => result.catch(() => {})); // awaited below; a failure then is reported there
    const delivered = () => sum(progress.map((p) => p.tally.delivered));
    const slowest = () => Math.min(...progress.map((p) => p.tally.slowest));
    const problems = () => {
      const t = progress.map((p) => p.tally);
      const [duplicated, foreign, errors, ended] = [sum(t.map((x) => x.duplicated)), sum(t.map((x) => x.foreign)), sum(t.map((x) => x.errors)), sum(t.map((x) => x.ended))];
      return duplicated + foreign + errors + ended > 0 ? `; duplicated ${duplicated}, foreign ${foreign}, errors ${errors}, streams ended ${ended}` : '';
    };

    log(`opening ${SUBSCRIBERS} subscribers (${processes} processes, ${CONNECT_RATE}/s)`);
    const capacity = WARMUP + EVENTS;
    children.forEach((child, i) => {
      const message: ToMemorySubscribers = { type: 'subscribe', subscribers: plans.filter((_, j) => j % processes === i), query: QUERY, secret: SECRET, perSecond: CONNECT_RATE / processes, capacity };
      child.send(message);
    });
    const gatewayMetrics = url(ports.gateway).replace('/graphql', '/metrics');
    for (let last = 0; ; ) {
      const open = await readCounter(gatewayMetrics, 'graphql_active_subscriptions');
      const listening = await redisSubscriptions(redis.url, CREATED_CHANNEL);
      const subscribed = sum(progress.map((p) => p.subscribed));
      if (open === SUBSCRIBERS && listening > 0 && subscribed === SUBSCRIBERS) break;
      if (Date.now() - last > 2000) {
        log(`  ${subscribed}/${SUBSCRIBERS} subscribed; ${open} streams open on the gateway; Redis subscribers of the creation channel ${listening}${problems()}`);
        last = Date.now();
      }
      await sleep(250);
    }
    log(`  all ${SUBSCRIBERS} streams open on the gateway, orders listening on Redis`);

    /** Publishes `count` events at RATE per second (a late tick catches up, never drifts), then waits for deliveries. */
    const publishRound = async (label: string, count: number): Promise<Omit<Reading, 'label' | 'events' | 'delivered' | 'gateway' | 'orders'>> => {
      const first = published;
      const end = first + count;
      const started = Date.now();
      let slowestBacklog = 0;
      let printed = Date.now();
      while (published < end) {
        const due = Math.min(end, first + Math.floor(((Date.now() - started) * RATE) / 1000) + 1);
        if (due > published) {
          const pipeline = publisher.pipeline();
          for (; published < due; published++) pipeline.publish(CREATED_CHANNEL, orderEvent(published));
          await pipeline.exec();
        }
        slowestBacklog = Math.max(slowestBacklog, published - slowest());
        // A subscriber that falls SUBSCRIPTION_MAX_PENDING_EVENTS behind is cut: with none left there is nothing to measure.
        if (sum(progress.map((p) => p.tally.ended)) === SUBSCRIBERS) throw new Error(`every subscriber's stream has ended (deliveries fell behind?): try a lower --rate than ${RATE}`);
        if (Date.now() - printed >= 5000) {
          log(`  ${label}: ${published - first}/${count} published; deliveries ${delivered()}/${published * SUBSCRIBERS}, slowest subscriber ${published - slowest()} behind${problems()}`);
          printed = Date.now();
        }
        await sleep(started + ((published - first) * 1000) / RATE - Date.now());
      }
      const publishS = (Date.now() - started) / 1000;
      const caughtUp = Date.now();
      let lastChange = Date.now();
      for (let seen = delivered(); delivered() < published * SUBSCRIBERS; ) {
        slowestBacklog = Math.max(slowestBacklog, published - slowest());
        if (delivered() !== seen) [seen, lastChange] = [delivered(), Date.now()];
        if (Date.now() - lastChange > DRAIN_MS) {
          log(`  ${label}: no delivery for ${DRAIN_MS / 1000} s, ${published * SUBSCRIBERS - delivered()} deliveries missing: carrying on (they count as lost)`);
          break;
        }
        await sleep(50);
      }
      return { slowestBacklog, catchUpS: (Date.now() - caughtUp) / 1000, publishS };
    };
    const read = async (label: string, round: Awaited<ReturnType<typeof publishRound>>) => {
      const [gatewayHeap, ordersHeap] = await Promise.all(measured.map(({ inspector }) => inspector.settledHeap()));
      const reading: Reading = { label, events: published - WARMUP, delivered: delivered(), gateway: gatewayHeap!, orders: ordersHeap!, ...round };
      readings.push(reading);
      const base = readings[0]!;
      log(
        `${label}: ${reading.events} events after the warm-up (this round published in ${reading.publishS.toFixed(0)} s); deliveries ${reading.delivered}/${published * SUBSCRIBERS}, slowest subscriber at most ${reading.slowestBacklog} behind, all delivered ${reading.catchUpS.toFixed(1)} s after the last publish${problems()}; ` +
          `heap after GC: gateway ${(gatewayHeap!.heapUsed / MB).toFixed(2)} MB (${signedMb(gatewayHeap!.heapUsed - base.gateway.heapUsed)}), orders ${(ordersHeap!.heapUsed / MB).toFixed(2)} MB (${signedMb(ordersHeap!.heapUsed - base.orders.heapUsed)}); ` +
          `RSS gateway ${(gatewayHeap!.rss / MB).toFixed(0)} MB, orders ${(ordersHeap!.rss / MB).toFixed(0)} MB`,
      );
    };
    const snapshot = async (when: string) => {
      if (!options.snapshots) return;
      mkdirSync(options.snapshots, { recursive: true });
      for (const { name, inspector } of measured) await inspector.heapSnapshot(resolve(options.snapshots, `${name}-${when}.heapsnapshot`));
      log(`  heap snapshots of the gateway and orders written to ${options.snapshots} (${when})`);
    };

    await read('warm-up', await publishRound('warm-up', WARMUP));
    await snapshot('start');
    for (let round = 1; published - WARMUP < EVENTS; round++) {
      const count = Math.min(ROUND, EVENTS - (published - WARMUP));
      const label = `round ${round}`;
      await read(label, await publishRound(label, count));
    }
    await snapshot('end');
    if (options.snapshots) {
      heapDiff = measured.map(({ name }) => `${name}: ${compareHeaps(resolve(options.snapshots!, `${name}-end.heapsnapshot`), resolve(options.snapshots!, `${name}-start.heapsnapshot`))}`).join('\n\n');
      console.log(`\nWhat the end holds more of than the start (by constructor):\n${heapDiff}\n`);
    }

    children.forEach((child) => child.send({ type: 'finish', published } satisfies ToMemorySubscribers));
    const reports = await Promise.all(results);
    final = reports.reduce(
      (total, { tally: t }) => ({
        subscribers: total.subscribers + t.subscribers, delivered: total.delivered + t.delivered, slowest: Math.min(total.slowest, t.slowest),
        duplicated: total.duplicated + t.duplicated, foreign: total.foreign + t.foreign, errors: total.errors + t.errors, ended: total.ended + t.ended, lost: total.lost + t.lost,
      }),
      { subscribers: 0, delivered: 0, slowest: Infinity, duplicated: 0, foreign: 0, errors: 0, ended: 0, lost: 0 },
    );
    await Promise.all(children.map((child) => stop(child, 2_000)));
  } catch (error) {
    failure = error;
    log(`the run failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  } finally {
    log('stopping every process');
    await cleanup();
  }

  const small = SUBSCRIBERS < 1000 || EVENTS < 10000 ? '**Small-size run** (fewer subscribers or events than the full-size defaults). ' : '';
  const header =
    `${small}${startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC, ${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, node ${process.version}; ` +
    `load average ${loadBefore} before and ${load()} after. \`${command}\`: ${SUBSCRIBERS} subscribers (half graphql-ws, half SSE, each an ADMIN identity of its own) ` +
    `in ${SUBSCRIBER_PROCESSES} processes, \`${SELECTIONS[SELECTION]}\`; ${WARMUP} warm-up events, then ${EVENTS} in rounds of ${ROUND}, ${RATE} events/s into Redis.`;
  const expected = published * SUBSCRIBERS;
  const table = renderReadings(readings, final, expected);
  console.log(`\n${header}\n\n${table}`);
  if (heapDiff) console.log(`\n${heapDiff}`);
  const wrong = final ? final.lost + final.duplicated + final.foreign + final.errors + final.ended : expected;
  if (options.readme && !failure && readings.length > 1) {
    const path = resolve(ROOT, 'bench/README.md');
    const text = readFileSync(path, 'utf8');
    const [from, to] = [text.indexOf(README_START), text.indexOf(README_END)];
    if (from < 0 || to < from) throw new Error(`bench/README.md has no ${README_START} ... ${README_END} block`);
    writeFileSync(path, `${text.slice(0, from + README_START.length)}\n${header}\n\n${table}\n${text.slice(to)}`);
    log('figures written to bench/README.md');
  }
  if (wrong > 0) console.error('some subscriber missed, repeated or received an event it should not have, an error, or its stream ended (see the table)');
  if (failure) console.error(`the run stopped early (see above)${options.readme ? '; bench/README.md was left as it was' : ''}`);
  process.exitCode = wrong > 0 || failure ? 1 : 0;
}

/** bench/README.md keeps one block of figures per selection. */
const README_START = `<!-- subscription-memory-results ${SELECTION}: start (npm run bench:subscription-memory -- --readme replaces this block) -->`;
const README_END = `<!-- subscription-memory-results ${SELECTION}: end -->`;

const signedMb = (bytes: number) => `${bytes >= 0 ? '+' : '−'}${(Math.abs(bytes) / MB).toFixed(2)} MB`;
const perEvent = (bytes: number, events: number) => (events > 0 ? `${(bytes / events).toFixed(bytes / events < 10 && bytes / events > -10 ? 2 : 0)}` : '');

function renderReadings(readings: Reading[], final: (MemoryTally & { lost: number }) | undefined, expected: number): string {
  if (readings.length === 0) return '(no reading: the run failed before the warm-up was measured)';
  const base = readings[0]!;
  const lines = [
    '| after | events (after warm-up) | deliveries | slowest subscriber max behind (events) | all delivered after last publish, s | gateway heap MB | gateway growth | gateway B / published event | gateway B / delivered event | orders heap MB | orders growth | orders B / event | gateway RSS MB | orders RSS MB |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const r of readings) {
    const deliveries = r.delivered - base.delivered;
    const [g, o] = [r.gateway.heapUsed - base.gateway.heapUsed, r.orders.heapUsed - base.orders.heapUsed];
    lines.push(
      `| ${r.label} | ${r.events} | ${r.delivered} | ${r.slowestBacklog} | ${r.catchUpS.toFixed(1)} | ${(r.gateway.heapUsed / MB).toFixed(2)} | ${r === base ? '' : signedMb(g)} | ${perEvent(g, r.events)} | ${perEvent(g, deliveries)} | ` +
        `${(r.orders.heapUsed / MB).toFixed(2)} | ${r === base ? '' : signedMb(o)} | ${perEvent(o, r.events)} | ${(r.gateway.rss / MB).toFixed(0)} | ${(r.orders.rss / MB).toFixed(0)} |`,
    );
  }
  const last = readings[readings.length - 1]!;
  const growth = (of: 'gateway' | 'orders') => last[of].heapUsed - base[of].heapUsed;
  const peak = (of: 'gateway' | 'orders') => Math.max(...readings.map((r) => r[of].heapUsed - base[of].heapUsed));
  const verdict = (of: 'gateway' | 'orders') =>
    `${of} ${signedMb(growth(of))} at the end, at most ${signedMb(peak(of))} at any reading: ${Math.abs(growth(of)) <= TARGET_MB * MB && peak(of) <= TARGET_MB * MB ? 'within' : '**over**'} ${TARGET_MB} MB`;
  const delivery = final
    ? `Deliveries ${final.delivered} / ${expected} (every subscriber every event, warm-up included): lost ${final.lost}, duplicated ${final.duplicated}, foreign ${final.foreign}, errors ${final.errors}, streams ended ${final.ended}.`
    : `Deliveries: no final tally (the run failed).`;
  return `${lines.join('\n')}\n\nHeap growth over the ${last.events} events after the warm-up: ${verdict('gateway')}; ${verdict('orders')}. ${delivery}`;
}

await main();
