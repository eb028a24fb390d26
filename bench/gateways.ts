// npm run bench: the users' comparison of gateways. The three seeded subgraphs (production mode; Grafbase, which
// cannot sign its calls, has a second set that serves unsigned ones), Redis, each gateway and this load generator
// (autocannon) all run in processes of their own; one gateway is under load at a time, in rounds that alternate the
// order, so that a busy machine weighs on all alike. Bodies are verified identical before
// timing (every variant of a varied scenario) and every response under load is compared with its gateway's answer to
// the same request (bench/workloads.ts for the varied ones). Prints progress, then a Markdown table, and writes the
// chart into the git-ignored bench/out/ (--chart elsewhere). `npm run bench -- --help` lists the options
// (gateways-options.ts).
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { basename, dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { counterIn, freePort, readCounter, token } from '@ordergraph/testkit';
import { formatSelfTimes, selfTimes } from './cpu-profile.js';
import { compareHeaps } from './heap-snapshot.js';
import { canonicalJson, processCpuMs, processRssMb } from './process-stats.js';
import { SECRET, UNSIGNED_SUBGRAPH_ENV, builtEntry, imageEnv, machineLine, prepareRun, start, startSeededSubgraphs, startSubgraphProcesses, stopAll, type SeededSubgraphs, type SubgraphProcesses } from './processes.js';
import { startFlags } from '../scripts/deployment-files.js';
import { renderChart, renderTable, type Measurement } from './report.js';
import { isVaried, type IdenticalScenario, type Scenario, type VariedScenario } from './scenarios.js';
import { OrderWrites, checkResponse, drawer, expectationOf, seededRandom, writeBody, type Draw, type Expectation, type GraphQLResponse, type OrdersRead, type Outcome, type Write } from './workloads.js';
import { unpatchedServers } from './unpatched.js';
import { grafbaseBinary, startGrafbase } from './grafbase.js';
import { GATEWAYS_HELP, GATEWAYS_OPTIONS, selectScenarios } from './gateways-options.js';

const { values: options } = parseArgs({ options: GATEWAYS_OPTIONS });
if (options.help) {
  console.log(GATEWAYS_HELP);
  process.exit(0);
}
const ROUNDS = Number(options.rounds);
const DURATION = Number(options.duration);
const WARMUP = Number(options.warmup);
/** Requests each gateway serves before the first round at least: --warmup seconds are repeated until then. */
const WARMUP_REQUESTS = 500;
/** Two warm-up passes at least: one this much cheaper per request than the one before shows the gateway still warming. */
const STILL_WARMING = 0.95;
const MAX_WARMUP_PASSES = 10;
const CONNECTIONS = Number(options.connections);
const scenarios = selectScenarios(options.scenarios);
const SCALE = Number(options.scale);
if (!Number.isInteger(SCALE) || SCALE < 1) throw new Error(`--scale: a whole number from 1, not ${options.scale}`);

interface Gateway {
  name: string;
  url: string;
  process: ChildProcess;
  /** The subgraphs it calls, whose CPU and datastore operations count against it. */
  subgraphs: SubgraphProcesses;
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

const OTHERS = ['hive runtime', 'hive runtime + rust planner', '@apollo/gateway'];
const PATCHED_BARE = 'hive runtime + rust planner on our patches';
const GRAFBASE = 'grafbase';

/** With --profile, ours and the bare runtime on the Rust planner write CPU profiles, each into a directory of its own. */
const PROFILED = { ours: 'our gateway', bare: 'the bare runtime on the Rust planner' };
/** With --profile, node --cpu-prof writing into <dir>/<subdirectories>. */
const cpuProfile = (...subdirectories: string[]) => (options.profile ? ['--cpu-prof', `--cpu-prof-dir=${resolve(options.profile, ...subdirectories)}`] : []);
const profiled = (which: keyof typeof PROFILED) => cpuProfile(which);

/** With --profile, subgraphs write CPU profiles too, into <dir>/<set>/<name>/ (see --help). */
const subgraphProfiling = (set: string) => (name: string) => cpuProfile(set, name);
const SUBGRAPH_WORKSPACES = ['services/users', 'services/orders', 'services/catalog'];
/** The supergraph files of the sets of subgraphs started besides ours (--own-subgraphs), removed at the end. */
const supergraphs: string[] = [];

/** The environment every set of subgraphs starts with: SEED_SCALE for the size scenarios' run at --scale. */
let seedEnv: Record<string, string> = {};

/** What a reader of the table must know about how a gateway ran, a line each: printed as it starts and below the table. */
const notes: string[] = [];

/** Each gateway `--gateways` names, in front of `subgraphs` and the supergraph composed over them (Grafbase aside). */
async function startGateways(subgraphs: SeededSubgraphs, redisUrl: string): Promise<Gateway[]> {
  const { supergraphPath } = subgraphs;
  const gateways: Gateway[] = [];
  const wanted = options.gateways.split(',');
  if (options.heap) mkdirSync(options.heap, { recursive: true });
  const heap = options.heap ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${resolve(options.heap)}`] : [];
  const add = async (name: string, script: string, args: (port: number) => string[], env: Record<string, string> = {}, execArgv: string[] = [], startFlags = true, own = subgraphs) => {
    if (!wanted.includes(name)) return;
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/graphql`;
    // The gateways of bench/servers import only packages: Node strips their types, no transpiler runs beside them.
    const child = await start(name, script, args(port), { PORT: String(port), ...env }, url.replace('/graphql', '/healthz'), { execArgv, typeStripping: true, startFlags });
    gateways.push({ name, url, process: child, subgraphs: own });
    process.stdout.write(`  ${name} on ${url}\n`);
  };
  const oursEnv = {
    SUPERGRAPH_PATH: supergraphPath,
    REDIS_URL: redisUrl,
    // High enough that the benchmark measures routing, not refusals.
    RATE_LIMIT_MAX: '1000000000',
    MAX_COMPLEXITY: '1000000',
    ...(options['entity-cache'] !== undefined ? { ENTITY_CACHE: 'on', ENTITY_CACHE_TTLS: options['entity-cache'] } : {}),
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
  // Our gateway as another checkout builds it: Node resolves its packages from beside its entry, so it runs on that
  // checkout's node_modules (and patches), with our start flags and environment.
  for (const dir of (options['ours-also'] ?? '').split(',').filter(Boolean)) {
    const entry = resolve(dir, builtEntry('gateway'));
    if (!existsSync(entry)) throw new Error(`--ours-also: no ${entry}; run npm ci and npm run build in ${dir} first`);
    const name = basename(resolve(dir));
    if (wanted.includes(name)) throw new Error(`--ours-also: a second gateway named ${name}`);
    wanted.push(name);
    const profile = cpuProfile(name);
    if (!options['own-subgraphs']) {
      await add(name, entry, () => [], { ...imageEnv(), ...oursEnv }, [...startFlags('gateway'), ...profile], false);
      continue;
    }
    // In front of that checkout's subgraphs, started as ours are, and the supergraph composed over them.
    for (const workspace of SUBGRAPH_WORKSPACES) {
      if (!existsSync(resolve(dir, builtEntry(workspace)))) throw new Error(`--own-subgraphs: no ${resolve(dir, builtEntry(workspace))}; run npm run build in ${dir} first`);
    }
    process.stdout.write(`  ${name}'s own subgraphs\n`);
    const own = await startSeededSubgraphs(redisUrl, { env: seedEnv, entry: (workspace) => resolve(dir, builtEntry(workspace)), execArgv: subgraphProfiling(`${name}-subgraphs`) });
    supergraphs.push(own.supergraphPath);
    await add(name, entry, () => [], { ...imageEnv(), ...oursEnv, SUPERGRAPH_PATH: own.supergraphPath }, [...startFlags('gateway'), ...profile], false, own);
  }
  // The others as users install them: on the published packages, not on our patches.
  const server = OTHERS.some((name) => wanted.includes(name)) ? unpatchedServers() : () => '';
  await add('hive runtime', server('hive-runtime.ts'), (port) => [supergraphPath, String(port)]);
  await add('hive runtime + rust planner', server('hive-runtime.ts'), (port) => [supergraphPath, String(port), '--rust'], {}, [...heap, ...profiled('bare')]);
  await add('@apollo/gateway', server('apollo-gateway.ts'), (port) => [supergraphPath, String(port)]);
  // Only when named: the same engine on our node_modules, to show what our patches buy it.
  await add(PATCHED_BARE, 'bench/servers/hive-runtime.ts', (port) => [supergraphPath, String(port), '--rust']);
  if (wanted.includes(GRAFBASE)) {
    const binary = grafbaseBinary();
    if (!('unavailable' in binary)) gateways.push(await grafbase(binary, redisUrl));
    // In the default set it is left out where its binary cannot run (not Linux x86-64); named, that is an error.
    else if (options.gateways === GATEWAYS_OPTIONS.gateways.default) process.stdout.write(`  ${GRAFBASE} left out: ${binary.unavailable}\n`);
    else throw new Error(`--gateways names ${GRAFBASE}, which cannot run here: ${binary.unavailable}`);
  }
  return gateways;
}

/**
 * Grafbase's gateway (bench/grafbase.ts) in front of subgraphs of its own: it cannot sign its calls as the
 * production subgraphs require (Hive's HMAC in the request's extensions), so it is given a second seeded set that
 * serves unsigned calls. Orders uses Redis only for subscriptions' pub/sub, which nothing here subscribes to, so the
 * two sets share it.
 */
async function grafbase(binary: { path: string; version: string }, redisUrl: string): Promise<Gateway> {
  const note =
    `${GRAFBASE} (Grafbase CLI ${binary.version}, \`grafbase dev\`) calls a second set of the seeded subgraphs, which serve unsigned calls ` +
    '(NODE_ENV=development, no SUBGRAPH_SIGNING_SECRET): it cannot sign them as the others do, so neither it nor its subgraphs pay for signatures';
  if (!notes.includes(note)) notes.push(note);
  process.stdout.write(`  ${note}\n`);
  const subgraphs = await startSubgraphProcesses(redisUrl, { env: { ...UNSIGNED_SUBGRAPH_ENV, ...seedEnv } });
  const port = await freePort();
  const child = await startGrafbase(binary.path, subgraphs.urls, port);
  const url = `http://127.0.0.1:${port}/graphql`;
  process.stdout.write(`  ${GRAFBASE} on ${url}\n`);
  return { name: GRAFBASE, url, process: child, subgraphs };
}

type Headers = Record<string, string>;

/** Who the varied scenarios' requests are sent as: a read's viewer, or the seeded user a write is signed in as. */
interface Viewers {
  ADMIN: Headers;
  ANONYMOUS: Headers;
  users: Map<string, Headers>;
}

/** One load run's result, with the bodies that differed from their expected answers and the 200s carrying errors. */
interface Loaded {
  result: autocannon.Result;
  mismatches: number;
  graphqlErrors: number;
  /** Writes answered (and checked), in a workload with writes. */
  writes?: number;
  /** Of the mismatches, reads of a user's orders that missed a write of theirs answered before they were sent. */
  staleReads?: number;
  /** The first few stale reads, described (OrderWrites.describeStale). */
  stale?: string[];
}

/** A scenario whose answers every gateway has given identically, ready to be put under load. */
interface Prepared {
  /** The mean size of an answer (a varied scenario's reads, weighted as drawn). */
  responseKb: number;
  /** `run`: which of the gateway's load runs in this scenario this is (warm-up passes, then rounds): its draws' seed. */
  load(gateway: Gateway, seconds: number, run: number): Promise<Loaded>;
}

/** A gateway's answer, which must be a 200 without errors. */
async function answer(gateway: Gateway, headers: Headers, body: string, what: string): Promise<string> {
  const response = await fetch(gateway.url, { method: 'POST', headers, body });
  const text = await response.text();
  const parsed = JSON.parse(text) as { errors?: unknown };
  if (response.status !== 200 || parsed.errors) throw new Error(`${gateway.name} (${what}): ${response.status} ${text.slice(0, 500)}`);
  return text;
}

/** Every gateway's answer to one identical request, verified identical (as JSON); under load each response must be byte for byte its gateway's. */
async function prepareIdentical(scenario: IdenticalScenario, gateways: Gateway[], headers: Headers): Promise<Prepared> {
  const body = JSON.stringify({ query: scenario.query, variables: scenario.variables });
  const expected = new Map<string, string>();
  for (const gateway of gateways) expected.set(gateway.name, await answer(gateway, headers, body, scenario.id));
  const reference = canonicalJson([...expected.values()][0]!);
  for (const [name, text] of expected) {
    if (canonicalJson(text) !== reference) throw new Error(`${name} answers scenario ${scenario.id} differently from ${gateways[0]!.name}`);
  }
  console.log(`\n(${scenario.id}) ${scenario.name}: response ${(Buffer.byteLength(reference) / 1024).toFixed(1)} KB, identical from all ${gateways.length} gateways`);
  return {
    responseKb: Buffer.byteLength(reference) / 1024,
    load: async (gateway, seconds) => {
      const result = await autocannon({ url: gateway.url, method: 'POST', headers, body, connections: CONNECTIONS, duration: seconds, expectBody: expected.get(gateway.name)! });
      return { result, mismatches: result.mismatches, graphqlErrors: 0 };
    },
  };
}

/** Runs `task` on each of `items`, `limit` at a time. */
async function eachLimited<T>(items: readonly T[], limit: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: limit }, async () => {
    while (next < items.length) await task(items[next++]!);
  }));
}

/**
 * Each gateway's answer (in the order of the gateways) to a read already asked in this run, by viewer and body: (g)
 * asks again what (d) to (f) asked. Forgotten after a scenario that writes ((g), (j)) and when the data set changes.
 */
const answered = new Map<string, string[]>();

/**
 * A population shape's answers under load, by scenario, shape and key: the first answer any gateway gave to a key no
 * gateway was asked before timing, as canonical JSON (or its stable part), which every other gateway's must equal.
 */
const firstAnswers = new Map<string, string>();

/**
 * The seed of a load run's draws, new for every run of every gateway: a run that replayed an earlier one's keys would
 * find them in ours' caches, filled by that run, where a user's traffic brings keys never asked before (over 200,000
 * products drawn uniformly, the response cache hit 81 % of reads when every run replayed one sequence). The sequences
 * differ from gateway to gateway, with the same distribution: the gateways that share one Redis (ours and
 * --ours-also) do not fill it for each other.
 */
const drawSeed = (gateway: Gateway, run: number) => 30 + 64 * run + gatewayIndex(gateway);
const gatewayIndexes = new Map<string, number>();
const gatewayIndex = (gateway: Gateway) => {
  if (!gatewayIndexes.has(gateway.name)) gatewayIndexes.set(gateway.name, gatewayIndexes.size);
  return gatewayIndexes.get(gateway.name)!;
};

/**
 * Every gateway's answer to every variant of every shape, verified identical (as JSON) before timing, and (g)'s writes
 * answered alike; under load each request carries a variant drawn at random and its response is checked against its
 * gateway's answer to that variant (or, for a shape the writes change, its stable part).
 */
async function prepareVaried(scenario: VariedScenario, gateways: Gateway[], viewers: Viewers): Promise<Prepared> {
  const { shapes, writes } = scenario.workload;
  const bodies = shapes.map((shape) => shape.variants.map((variables) => JSON.stringify({ query: shape.query, variables })));
  // By variant, or for a population shape by key (its variants are the keys population.sample names).
  const expectations = new Map(gateways.map((gateway) => [gateway.name, shapes.map(() => new Map<number, Expectation>())]));
  const keyOf = (s: number, v: number) => shapes[s]!.population?.sample[v] ?? v;
  const sizes = shapes.map(() => 0);
  const checking = performance.now();
  const variants = shapes.flatMap((shape, s) => shape.variants.map((_, v) => [s, v] as const));
  await eachLimited(variants, 8, async ([s, v]) => {
    const shape = shapes[s]!;
    const what = `${scenario.id}, ${shape.name} ${JSON.stringify(shape.variants[v])}`;
    const key = `${shape.viewer} ${bodies[s]![v]!}`;
    const answers = answered.get(key) ?? [];
    if (answers.length === 0) for (const gateway of gateways) answers.push(await answer(gateway, viewers[shape.viewer], bodies[s]![v]!, what));
    answered.set(key, answers);
    // A shape the writes change is held to its stable part: after (g), Grafbase's subgraphs hold other orders.
    const comparable = (text: string) => (shape.stable ? JSON.stringify(shape.stable(JSON.parse(text) as GraphQLResponse)) : canonicalJson(text));
    const reference = comparable(answers[0]!);
    answers.forEach((text, g) => {
      if (comparable(text) !== reference) throw new Error(`${gateways[g]!.name} answers ${what} differently from ${gateways[0]!.name}`);
      expectations.get(gateways[g]!.name)![s]!.set(keyOf(s, v), expectationOf(shape, text));
    });
    sizes[s]! += Buffer.byteLength(answers[0]!) / shape.variants.length;
  });
  const weight = shapes.reduce((sum, shape) => sum + shape.weight, 0);
  const responseKb = shapes.reduce((sum, shape, s) => sum + (sizes[s]! * shape.weight) / weight, 0) / 1024;
  if (writes) await checkWrites(scenario, gateways, viewers, writes);
  const counts = shapes.map((shape) => (shape.population ? `${shape.name} (${shape.population.describe}, ${shape.variants.length} checked)` : `${shape.variants.length} ${shape.name}`)).join(', ');
  console.log(`\n(${scenario.id}) ${scenario.name}: ${counts}${writes ? ', writes' : ''}; mean response ${responseKb.toFixed(1)} KB, identical from all ${gateways.length} gateways (checked in ${((performance.now() - checking) / 1000).toFixed(1)} s)`);

  /** A population key's first answer from this gateway: kept as its expectation, held to any other gateway's. */
  const firstAnswer = (id: string, s: number, key: number, body: string, expected: Map<number, Expectation>): Outcome => {
    let response: GraphQLResponse;
    try {
      response = JSON.parse(body) as GraphQLResponse;
    } catch {
      return 'differs';
    }
    if (response.errors) return 'errors';
    if (!response.data) return 'differs';
    const shape = shapes[s]!;
    expected.set(key, expectationOf(shape, body));
    const seen = shape.stable ? JSON.stringify(shape.stable(response)) : canonicalJson(body);
    const reference = `${id} ${s} ${key}`;
    const first = firstAnswers.get(reference);
    if (first === undefined) firstAnswers.set(reference, seen);
    return first === undefined || first === seen ? 'same' : 'differs';
  };

  return {
    responseKb,
    load: async (gateway, seconds, run) => {
      const ordersWritten = writes ? new OrderWrites(writes) : undefined;
      const next = drawer(scenario.workload, seededRandom(drawSeed(gateway, run)), ordersWritten);
      const expected = expectations.get(gateway.name)!;
      const tally = { mismatches: 0, graphqlErrors: 0, writes: 0, staleReads: 0, stale: [] as string[] };
      const count = (outcome: Outcome) => {
        // A stale read is a differing body too: the table's count holds it, the round's line names it.
        if (outcome === 'differs' || outcome === 'stale') tally.mismatches++;
        if (outcome === 'stale') tally.staleReads++;
        else if (outcome === 'errors') tally.graphqlErrors++;
      };
      const result = await autocannon({
        url: gateway.url,
        method: 'POST',
        connections: CONNECTIONS,
        duration: seconds,
        // One request in flight per connection: the context a response is checked in holds that request's draw.
        pipelining: 1,
        requests: [
          {
            setupRequest: (request, context) => {
              const draw = next();
              const sent = context as { draw?: Draw; shows?: OrdersRead | undefined; sentAt?: number };
              sent.draw = draw;
              sent.sentAt = performance.now();
              if (draw.kind === 'read') {
                // What a read of a user's orders must show of the writes answered before it is sent.
                const { ordersOf, variants, population, query } = shapes[draw.shape]!;
                const variables = population ? population.variables(draw.variant) : variants[draw.variant]!;
                sent.shows = ordersOf && ordersWritten?.expectedOrders(ordersOf.user(variables));
                const body = population ? JSON.stringify({ query, variables }) : bodies[draw.shape]![draw.variant]!;
                // Copies: autocannon writes Content-Length into the headers it is given.
                return { ...request, headers: { ...viewers[shapes[draw.shape]!.viewer] }, body };
              }
              return { ...request, headers: { ...viewers.users.get(draw.write.user)! }, body: writeBody(draw.write) };
            },
            onResponse: (status, body, context) => {
              const { draw, shows, sentAt } = context as { draw?: Draw; shows?: OrdersRead; sentAt: number };
              // autocannon counts a status other than 2xx as an error itself.
              if (status !== 200) {
                if (draw?.kind === 'write') ordersWritten!.release(draw.write);
                return;
              }
              // A response that cannot be matched to its request's draw cannot be verified: it counts as differing.
              if (!draw) return count('differs');
              if (draw.kind === 'write') {
                tally.writes++;
                return count(ordersWritten!.settle(draw.write, body));
              }
              const known = expected[draw.shape]!.get(draw.variant);
              const outcome = known ? checkResponse(known, body) : firstAnswer(scenario.id, draw.shape, draw.variant, body, expected[draw.shape]!);
              const ordersOf = shapes[draw.shape]!.ordersOf;
              const read = outcome === 'same' && shows && ordersOf ? ordersWritten!.check(shows, body, ordersOf.limit) : outcome;
              // The first few stale reads of a run are printed in full: a count alone does not say where to look.
              if (read === 'stale' && tally.stale.length < 3) tally.stale.push(ordersWritten!.describeStale(shows!, body, ordersOf!.limit, sentAt));
              count(read);
            },
          },
        ],
      });
      const { writes: written, staleReads, stale, ...outcomes } = tally;
      return { result, ...outcomes, ...(ordersWritten ? { writes: written, staleReads, stale } : {}) };
    },
  };
}

/**
 * Each gateway places, changes and cancels an order as a seeded user before timing: every answer must pass the
 * writes' own checks and match the other gateways' but for the order's id.
 */
async function checkWrites(scenario: VariedScenario, gateways: Gateway[], viewers: Viewers, writes: NonNullable<VariedScenario['workload']['writes']>): Promise<void> {
  const user = writes.users[0]!;
  const items = [{ productId: writes.products[0]!, quantity: 2 }, { productId: writes.products[1]!, quantity: 1 }];
  const answers: string[] = [];
  for (const gateway of gateways) {
    const orders = new OrderWrites(writes);
    const send = async (write: Write) => {
      const text = await answer(gateway, viewers.users.get(user)!, writeBody(write), `${scenario.id}, ${write.op}Order`);
      if (orders.settle(write, text) !== 'same') throw new Error(`${gateway.name} (${scenario.id}): ${write.op}Order answered ${text.slice(0, 500)}`);
      return text;
    };
    const created = await send({ op: 'create', user, items });
    const orderId = (JSON.parse(created) as { data: { createOrder: { id: string } } }).data.createOrder.id;
    const updated = await send({ op: 'update', user, orderId, items: items.slice(1) });
    const cancelled = await send({ op: 'cancel', user, orderId });
    answers.push(canonicalJson(JSON.stringify([created, updated, cancelled].map((text) => JSON.parse(text.replaceAll(orderId, 'ORDER'))))));
  }
  answers.forEach((text, g) => {
    if (text !== answers[0]) throw new Error(`${gateways[g]!.name} answers ${scenario.id}'s writes differently from ${gateways[0]!.name}`);
  });
}

async function main() {
  const started = new Date();
  console.log(`gateways benchmark: ${scenarios.map((s) => s.id).join(', ')}; ${ROUNDS} rounds x ${DURATION} s, ${CONNECTIONS} connections, node ${process.version}`);
  console.log(machineLine());
  const redis = await prepareRun();
  let subgraphs = await startSeededSubgraphs(redis.url, { env: seedEnv, execArgv: subgraphProfiling('subgraphs') });
  console.log('starting gateways');
  let gateways = await startGateways(subgraphs, redis.url);
  const authorization = `Bearer ${await token('ADMIN', 'user-0000', { secret: SECRET })}`;
  const headers = { 'content-type': 'application/json', authorization };
  // The varied scenarios' viewers: the administrator, nobody, and each seeded user for (g)'s writes.
  const viewers: Viewers = { ADMIN: headers, ANONYMOUS: { 'content-type': 'application/json' }, users: new Map() };
  const signInWriters = async (workloads: VariedScenario['workload'][]) => {
    for (const user of new Set(workloads.flatMap((workload) => workload.writes?.users ?? []))) {
      if (!viewers.users.has(user)) viewers.users.set(user, { 'content-type': 'application/json', authorization: `Bearer ${await token('USER', user, { secret: SECRET })}` });
    }
  };
  await signInWriters(scenarios.filter(isVaried).map((scenario) => scenario.workload));
  // Of the subgraphs a gateway calls.
  const storeCalls = async (gateway: Gateway) => {
    let sum = 0;
    for (const url of Object.values(gateway.subgraphs.urls)) sum += await readCounter(url.replace('/graphql', '/metrics'), 'datastore_operations_total');
    return sum;
  };
  const subgraphCpuMs = (gateway: Gateway) => Object.values(gateway.subgraphs.processes).reduce((sum, child) => sum + processCpuMs(child.pid!), 0);

  // Ours' caches: lookups by result, summed over its entity cache's subgraphs and types.
  const cacheLookups = async (gateway: Gateway) => {
    const metrics = await (await fetch(gateway.url.replace('/graphql', '/metrics'))).text();
    const entityHits = counterIn(metrics, 'gateway_entity_cache_lookups_total', { result: 'hit' });
    return {
      entityHits,
      entityLookups: entityHits + counterIn(metrics, 'gateway_entity_cache_lookups_total', { result: 'miss' }),
      responseHits: counterIn(metrics, 'gateway_response_cache_lookups_total', { result: 'hit' }),
      // Every result: hit, miss, changed, unavailable.
      responseLookups: counterIn(metrics, 'gateway_response_cache_lookups_total'),
    };
  };

  const measurements: Measurement[] = [];
  const measure = async (scenario: Scenario) => {
    const { responseKb, load } = isVaried(scenario) ? await prepareVaried(scenario, gateways, viewers) : await prepareIdentical(scenario, gateways, headers);

    // Warmed by requests as well as seconds: after 2 s of (d) (about 100 requests at its rate) the first gateway's
    // first round cost up to 1.3x the CPU per request of the next gateway's, the same build included; after 8 s
    // (about 500) it did not (bench/README.md). And until it stops getting cheaper: a gateway whose heap is still
    // growing (the bare runtime's, to 400 MB) spent a third less CPU per request in (a)'s second round than in its
    // first, and the ratios followed its warm-up more than the code.
    for (const gateway of gateways) {
      let requests = 0;
      const costs: number[] = [];
      for (let pass = 0; pass < MAX_WARMUP_PASSES; pass++) {
        const cpu0 = processCpuMs(gateway.process.pid!);
        const served = (await load(gateway, WARMUP, pass)).result.requests.total;
        requests += served;
        costs.push((processCpuMs(gateway.process.pid!) - cpu0) / Math.max(served, 1));
        const warming = costs.length < 2 || costs.at(-1)! < STILL_WARMING * costs.at(-2)!;
        if (requests >= WARMUP_REQUESTS && !warming) break;
      }
      console.log(`  warm-up ${gateway.name.padEnd(28)} ${costs.length} x ${WARMUP} s, cpu ${costs.map((cost) => cost.toFixed(2)).join(' -> ')} ms/req`);
    }

    const totals = new Map(gateways.map((gateway) => [gateway.name, { requests: 0, seconds: 0, errors: 0, mismatches: 0, gatewayCpu: 0, subgraphCpu: 0, storeCalls: 0, peakRss: 0, p50: [] as number[], p99: [] as number[], rounds: [] as Measurement['rounds'], hits: { entityHits: 0, entityLookups: 0, responseHits: 0, responseLookups: 0 } }]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const gateway of round % 2 === 0 ? gateways : [...gateways].reverse()) {
        const total = totals.get(gateway.name)!;
        const ours = gateway.name === 'ours';
        const [cpu0, subgraphCpu0, store0, lookups0] = [processCpuMs(gateway.process.pid!), subgraphCpuMs(gateway), await storeCalls(gateway), ours ? await cacheLookups(gateway) : undefined];
        const sampler = setInterval(() => (total.peakRss = Math.max(total.peakRss, processRssMb(gateway.process.pid!))), 100);
        const { result, mismatches, graphqlErrors, writes, staleReads, stale } = await load(gateway, DURATION, MAX_WARMUP_PASSES + round);
        clearInterval(sampler);
        total.peakRss = Math.max(total.peakRss, processRssMb(gateway.process.pid!));
        const requests = result.requests.total;
        total.requests += requests;
        total.seconds += result.duration;
        const errors = result.errors + result.timeouts + result.non2xx + graphqlErrors;
        total.errors += errors;
        total.mismatches += mismatches;
        const gatewayCpu = processCpuMs(gateway.process.pid!) - cpu0;
        total.gatewayCpu += gatewayCpu;
        total.rounds.push({ rps: requests / result.duration, gatewayCpuMs: gatewayCpu / requests });
        const subgraphCpu = subgraphCpuMs(gateway) - subgraphCpu0;
        total.subgraphCpu += subgraphCpu;
        total.storeCalls += (await storeCalls(gateway)) - store0;
        total.p50.push(result.latency.p50);
        total.p99.push(result.latency.p99);
        let hitLine = '';
        if (lookups0) {
          const lookups = await cacheLookups(gateway);
          for (const key of Object.keys(lookups) as (keyof typeof lookups)[]) total.hits[key] += lookups[key] - lookups0[key];
          hitLine = `  cache hits ${(lookups.entityHits - lookups0.entityHits).toFixed(0)}/${(lookups.entityLookups - lookups0.entityLookups).toFixed(0)} entity, ${(lookups.responseHits - lookups0.responseHits).toFixed(0)}/${(lookups.responseLookups - lookups0.responseLookups).toFixed(0)} response`;
        }
        console.log(
          `  round ${round + 1}/${ROUNDS} ${gateway.name.padEnd(28)} ${(requests / result.duration).toFixed(0).padStart(6)} req/s  p50 ${result.latency.p50} ms  p99 ${result.latency.p99} ms  ` +
            `cpu ${(gatewayCpu / requests).toFixed(2)} ms/req  subgraphs ${(subgraphCpu / requests).toFixed(2)} ms/req  errors ${errors}  differing bodies ${mismatches}${writes === undefined ? '' : `  writes ${writes}  stale reads ${staleReads}`}${hitLine}`,
        );
        for (const read of stale ?? []) console.log(`    stale read: ${read}`);
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
        cacheHits: gateway.name === 'ours' ? { entity: total.hits.entityHits / total.hits.entityLookups, response: total.hits.responseHits / total.hits.responseLookups } : undefined,
        errors: total.errors,
        mismatches: total.mismatches,
        responseKb,
      });
    }
  };
  const measureAll = async (list: Scenario[]) => {
    for (const scenario of list) {
      await measure(scenario);
      if (isVaried(scenario) && scenario.workload.writes) answered.clear();
    }
  };
  try {
    await measureAll(scenarios);
    // The size scenarios once more, on a data set seeded at --scale: every process started anew, Redis emptied.
    const sized = scenarios.filter(isVaried).filter((scenario) => scenario.atScale);
    if (SCALE > 1 && sized.length > 0) {
      console.log(`\nthe size scenarios at SEED_SCALE=${SCALE}: every process started anew`);
      await stopAll();
      rmSync(subgraphs.supergraphPath, { force: true });
      // Emptied: it keeps nothing on disk.
      await redis.stop();
      await redis.start();
      seedEnv = { SEED_SCALE: String(SCALE) };
      answered.clear();
      const started = performance.now();
      subgraphs = await startSeededSubgraphs(redis.url, { env: seedEnv, execArgv: subgraphProfiling(`subgraphs-${SCALE}`) });
      console.log(`  subgraphs seeded and ready in ${((performance.now() - started) / 1000).toFixed(0)} s`);
      gateways = await startGateways(subgraphs, redis.url);
      const large = sized.map((scenario) => ({ ...scenario, id: `${scenario.id}@${SCALE}`, name: `${scenario.name}, SEED_SCALE=${SCALE}`, workload: scenario.atScale!(SCALE) }));
      await signInWriters(large.map((scenario) => scenario.workload));
      await measureAll(large);
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
    for (const path of [subgraphs.supergraphPath, ...supergraphs]) rmSync(path, { force: true });
  }
  const machine = `${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}, node ${process.version}, load average at the end ${loadavg().map((l) => l.toFixed(2)).join(' ')}`;
  console.log(`\n${renderTable(measurements, { date: started.toISOString(), machine, rounds: ROUNDS, duration: DURATION, connections: CONNECTIONS, notes })}`);
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
