// The workload of the caches' consistency suite (e2e/consistency.test.ts) and its longer run (bench/consistency.ts):
// writers giving products rising versions through both gateway replicas, readers on every path by which a cache may
// answer with a product, and the faults a deployment meets (a replica restarted, Redis flushed, Redis restarted), all
// recorded as a history for checkHistory.
import { toGlobalId } from '@ordergraph/core';
import { SEED_USER_LOCAL_ID, productLocalId, seedProductAt } from '@ordergraph/seed';
import { HistoryRecorder, checkHistory, type ConsistencyReport, type History } from './consistency.js';
import { readCounter, token } from './http.js';
import type { Supergraph } from './supergraph.js';

/** Every subgraph's fetches cacheable by the entity cache, so that every path below may be answered from it. */
export const CONSISTENCY_ENTITY_CACHE_TTLS = 'users.Query=60,users.User=60,orders.Query=60,orders.User=60,orders.Order=60,catalog.Query=60,catalog.Product=60';

/** The gateway settings of the run: both caches on, and no rate limit in the way of the readers. */
export const CONSISTENCY_GATEWAY_ENV: Readonly<Record<string, string>> = {
  ENTITY_CACHE: 'on',
  ENTITY_CACHE_TTLS: CONSISTENCY_ENTITY_CACHE_TTLS,
  RATE_LIMIT_MAX: '1000000000',
};

export type ConsistencyFault = 'restart-gateway' | 'flushall' | 'restart-redis';

export interface ConsistencyPhase {
  name: string;
  durationMs: number;
  /** What happens during the phase, `faults` times spread evenly over it (the next one once the last is over). */
  fault?: ConsistencyFault;
  faults?: number;
}

/** A steady phase, then one per fault, each of `phaseMs`. */
export function consistencyPhases(phaseMs: number, faults = 1): ConsistencyPhase[] {
  return [
    { name: 'steady', durationMs: phaseMs },
    { name: 'gateway restart', durationMs: phaseMs, fault: 'restart-gateway', faults },
    { name: 'flushall', durationMs: phaseMs, fault: 'flushall', faults },
    { name: 'redis restart', durationMs: phaseMs, fault: 'restart-redis', faults },
  ];
}

export interface ConsistencyProgress {
  phase: string;
  elapsedMs: number;
  report: ConsistencyReport;
}

export interface ConsistencyWorkloadOptions {
  /** Two or more gateway replicas sharing one private Redis, started with CONSISTENCY_GATEWAY_ENV. */
  supergraph: Supergraph;
  phases: readonly ConsistencyPhase[];
  /** Concurrent writers; each gives its own `registersPerWriter` products rising versions, one write at a time. */
  writers: number;
  registersPerWriter: number;
  readers: number;
  /** A writer waits up to this long (at random) between writes, so that caches fill and serve between them. */
  writePauseMs?: number;
  /** How long Redis stays away in a `restart-redis` fault. */
  redisDownMs?: number;
  /** A read with no answer by then fails (a write is never given up on: its fate would be unknown). */
  readTimeoutMs?: number;
  /** The first product used as a register: a seeded product's index. */
  firstProduct?: number;
  /** Only the paths whose name contains one of these (all of CONSISTENCY_PATHS by default). */
  paths?: readonly string[];
  progressEveryMs?: number;
  onProgress?: (progress: ConsistencyProgress) => void;
  /** Told of each fault as it begins and ends, with the time since the workload began. */
  onFault?: (what: string, elapsedMs: number) => void;
}

export interface ConsistencyRun {
  history: History;
  report: ConsistencyReport;
  /** Every path read, by name. */
  paths: string[];
  /** Requests that got an answer with versions in it, per path. */
  requests: Record<string, number>;
  /** Of those, the ones the response cache answered, per path. */
  fromResponseCache: Record<string, number>;
  /** The entity cache's lookups of both replicas (each counted until it restarted), by result: hit, miss... */
  entityCacheLookups: Record<string, number>;
  durationMs: number;
}

type Caller = 'anonymous' | 'user' | 'admin';

/** A product as an answer shows it: its global ID and name. */
interface Shown {
  id: string;
  name: string;
}

interface Fixture {
  /** Global IDs of the registers, in order. */
  products: string[];
  /** An order holding every register's product once, placed by SEED_USER_LOCAL_ID. */
  order: string;
  firstProduct: number;
}

/**
 * One way of reading products. A path for one product is aimed at a register; a list path reads every register at
 * once and must hold each (a register missing is a failed read).
 */
interface ReadPath {
  name: string;
  caller: Caller;
  query: string;
  list: boolean;
  variables(product: string, fixture: Fixture): Record<string, unknown>;
  /** The products the answer's data shows; throws when it is not the shape asked for. */
  shown(data: Record<string, any>, product: string, fixture: Fixture): Shown[];
}

const PRODUCT_ID_NAME = 'query ConsistencyProduct($id: ID!) { product(id: $id) { id name } }';
const one = (product: Shown | null | undefined): Shown[] => {
  if (!product) throw new Error('no product in the answer');
  return [product];
};
const itemsOf = (order: { items: { product: Shown | null }[] } | null | undefined): Shown[] => {
  if (!order) throw new Error('no order in the answer');
  return order.items.map(({ product }) => {
    if (!product) throw new Error('a line item without its product');
    return product;
  });
};

const PATHS: readonly ReadPath[] = [
  // The response cache's: anonymous and hinted (product 300 s, name 3600 s).
  { name: 'anonymous product { id name }', caller: 'anonymous', query: PRODUCT_ID_NAME, list: false, variables: (id) => ({ id }), shown: (data) => one(data['product']) },
  {
    name: 'anonymous product { name }',
    caller: 'anonymous',
    query: 'query ConsistencyProductName($id: ID!) { product(id: $id) { name } }',
    list: false,
    variables: (id) => ({ id }),
    shown: (data, id) => one(data['product'] && { id, name: data['product'].name }),
  },
  // The entity cache's, for anonymous callers: the catalog's root list, and two roots of users whose products the
  // catalog completes (_entities).
  {
    name: 'anonymous products page',
    caller: 'anonymous',
    query: 'query ConsistencyProducts($limit: Int!, $offset: Int!) { products(limit: $limit, offset: $offset) { id name } }',
    list: true,
    variables: (_id, fixture) => ({ limit: fixture.products.length, offset: fixture.firstProduct }),
    shown: (data) => data['products'] as Shown[],
  },
  {
    name: 'anonymous search',
    caller: 'anonymous',
    // Every version's name is `P-<n>`: the word `p` finds them all, and no seeded product.
    query: 'query ConsistencySearch { search(query: "P") { __typename ... on Product { id name } } }',
    list: true,
    variables: () => ({}),
    shown: (data) => (data['search'] as (Shown & { __typename: string })[]).filter(({ __typename }) => __typename === 'Product'),
  },
  {
    name: 'anonymous node',
    caller: 'anonymous',
    query: 'query ConsistencyNode($id: ID!) { node(id: $id) { id ... on Product { name } } }',
    list: false,
    variables: (id) => ({ id }),
    shown: (data) => one(data['node']),
  },
  // Signed in: never the response cache; the entity cache, per caller where the answer is private.
  { name: 'user product', caller: 'user', query: PRODUCT_ID_NAME, list: false, variables: (id) => ({ id }), shown: (data) => one(data['product']) },
  { name: 'admin product', caller: 'admin', query: PRODUCT_ID_NAME, list: false, variables: (id) => ({ id }), shown: (data) => one(data['product']) },
  // Through orders: an order's line items, and a user's newest order (users, then orders, then the catalog).
  {
    name: 'admin order items',
    caller: 'admin',
    query: 'query ConsistencyOrder($id: ID!) { order(id: $id) { items { product { id name } } } }',
    list: true,
    variables: (_id, fixture) => ({ id: fixture.order }),
    shown: (data) => itemsOf(data['order']),
  },
  {
    name: 'admin user orders items',
    caller: 'admin',
    query: 'query ConsistencyUserOrders($id: ID!) { user(id: $id) { orders(limit: 1) { id items { product { id name } } } } }',
    list: true,
    variables: () => ({ id: toGlobalId('User', SEED_USER_LOCAL_ID) }),
    shown: (data, _id, fixture) => {
      const newest = (data['user'] as { orders: { id: string; items: { product: Shown | null }[] }[] } | null)?.orders[0];
      if (newest?.id !== fixture.order) throw new Error(`the user's newest order is ${newest?.id}, not ${fixture.order}`);
      return itemsOf(newest);
    },
  },
];

/** The paths the workload reads, by name. */
export const CONSISTENCY_PATHS: readonly string[] = PATHS.map(({ name }) => name);

const WRITE = 'mutation ConsistencyWrite($id: ID!, $name: String!) { updateProduct(id: $id, input: { name: $name }) { id name } }';
const PLACE_ORDER = 'mutation ConsistencyOrder($items: [LineItemInput!]!) { createOrder(input: { items: $items }) { id } }';

const nameOf = (version: number) => `P-${version}`;
const VERSIONED = /^P-(\d+)$/;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

interface Answer {
  data: Record<string, any>;
  /** Whether the response cache answered (only its answers carry an Age header). */
  cached: boolean;
}

/** POSTs an operation; throws on anything but a 200 with data and no errors. */
async function post(url: string, query: string, variables: Record<string, unknown>, bearer: string | undefined, timeoutMs: number | undefined): Promise<Answer> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json, application/json', ...(bearer ? { authorization: `Bearer ${bearer}` } : {}) },
    body: JSON.stringify({ query, variables }),
    ...(timeoutMs ? { signal: AbortSignal.timeout(timeoutMs) } : {}),
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`HTTP ${response.status}: ${text.slice(0, 200)}`);
  const body = JSON.parse(text) as { data?: Record<string, any> | null; errors?: { message: string; extensions?: { code?: string } }[] };
  if (body.errors?.length) throw new Error(`GraphQL ${body.errors.map((error) => error.extensions?.code ?? error.message).join(', ')}`);
  if (!body.data) throw new Error('no data');
  return { data: body.data, cached: response.headers.has('age') };
}

const describeError = (error: unknown) => {
  if (!(error instanceof Error)) return String(error);
  const cause = (error as { cause?: { code?: string } }).cause?.code;
  return cause ? `${error.message} (${cause})` : error.message;
};

export async function runConsistencyWorkload(options: ConsistencyWorkloadOptions): Promise<ConsistencyRun> {
  const { supergraph, phases } = options;
  const urls = supergraph.gatewayUrls;
  const redis = supergraph.redis;
  if (urls.length < 2 || !redis) throw new Error('the consistency workload needs two gateway replicas and their private Redis');
  const writePauseMs = options.writePauseMs ?? 50;
  const readTimeoutMs = options.readTimeoutMs ?? 20_000;
  const firstProduct = options.firstProduct ?? 150;
  const bearers: Record<Caller, string | undefined> = {
    anonymous: undefined,
    user: await token('USER', SEED_USER_LOCAL_ID),
    admin: await token('ADMIN', 'user-0000'),
  };
  const registerCount = options.writers * options.registersPerWriter;
  // A search answers 20 products at most, and every list path must hold every register.
  if (registerCount < 1 || registerCount > 20) throw new Error(`writers x registersPerWriter must be 1 to 20, not ${registerCount}`);
  const locals = Array.from({ length: registerCount }, (_, i) => productLocalId(firstProduct + i));
  const seededNames = new Map(locals.map((local, i) => [local, seedProductAt(firstProduct + i).name]));
  const recorder = new HistoryRecorder();
  const started = performance.now();
  let writes = 0;

  /** Sends write `version` of a product and records it, acknowledged or failed. */
  const write = async (local: string, version: number) => {
    const replica = writes++ % urls.length;
    const invokedAt = performance.now();
    try {
      const { data } = await post(urls[replica]!, WRITE, { id: toGlobalId('Product', local), name: nameOf(version) }, bearers.admin, undefined);
      const acknowledgedAt = performance.now();
      if (data['updateProduct']?.name !== nameOf(version)) throw new Error(`the write answered ${JSON.stringify(data['updateProduct'])}`);
      recorder.write({ register: local, version, invokedAt, acknowledgedAt });
    } catch (error) {
      recorder.failedWrite({ register: local, version, invokedAt, endedAt: performance.now(), error: describeError(error) });
    }
  };

  // Version 1 of every product, so that a search for `P` finds them all from the start, and an order holding them.
  recorder.phase('setup');
  for (const local of locals) await write(local, 1);
  const placed = await post(urls[0]!, PLACE_ORDER, { items: locals.map((local) => ({ productId: toGlobalId('Product', local), quantity: 1 })) }, bearers.user, readTimeoutMs);
  const fixture: Fixture = { products: locals.map((local) => toGlobalId('Product', local)), order: placed.data['createOrder'].id as string, firstProduct };
  const registerOf = new Map(fixture.products.map((id, i) => [id, locals[i]!]));
  /** A name's version: n of `P-<n>`, 0 for the seeded name, undefined for any other. */
  const versionOf = (register: string, name: string) => {
    const version = VERSIONED.exec(name)?.[1];
    if (version !== undefined) return Number(version);
    return name === seededNames.get(register) ? 0 : undefined;
  };

  let running = true;
  const paths = PATHS.filter(({ name }) => !options.paths || options.paths.some((part) => name.includes(part)));
  if (paths.length === 0) throw new Error(`no path matches ${options.paths?.join(', ')}`);
  const requests: Record<string, number> = Object.fromEntries(paths.map(({ name }) => [name, 0]));
  const fromResponseCache: Record<string, number> = Object.fromEntries(paths.map(({ name }) => [name, 0]));
  const read = async (path: ReadPath, replica: number, product: string) => {
    const startedAt = performance.now();
    const fail = (error: unknown) => recorder.failedRead({ path: path.name, replica, startedAt, endedAt: performance.now(), error: describeError(error) });
    let shown: Shown[];
    let endedAt: number;
    let cached: boolean;
    try {
      const answer = await post(urls[replica]!, path.query, path.variables(product, fixture), bearers[path.caller], readTimeoutMs);
      endedAt = performance.now();
      cached = answer.cached;
      shown = path.shown(answer.data, product, fixture);
    } catch (error) {
      fail(error);
      return false;
    }
    const versions = new Map<string, number>();
    for (const { id, name } of shown) {
      // A list may hold other products too.
      const register = registerOf.get(id);
      if (register === undefined) continue;
      const version = versionOf(register, name);
      if (version === undefined) {
        fail(new Error(`${register} is named ${JSON.stringify(name)}`));
        return false;
      }
      versions.set(register, version);
    }
    const missing = (path.list ? locals : [registerOf.get(product)!]).filter((register) => !versions.has(register));
    if (missing.length > 0) {
      fail(new Error(`the answer lacks ${missing.join(', ')}`));
      return false;
    }
    for (const [register, version] of versions) recorder.read({ register, path: path.name, replica, startedAt, endedAt, version });
    requests[path.name]!++;
    if (cached) fromResponseCache[path.name]!++;
    return true;
  };

  const reader = async (index: number) => {
    for (let turn = 0; running; turn++) {
      const path = paths[(index + turn) % paths.length]!;
      const replica = Math.floor(Math.random() * urls.length);
      const product = fixture.products[Math.floor(Math.random() * fixture.products.length)]!;
      // A replica being restarted refuses at once: no need to ask it a thousand times a second meanwhile.
      if (!(await read(path, replica, product))) await sleep(10);
    }
  };
  const writer = async (index: number) => {
    const own = locals.slice(index * options.registersPerWriter, (index + 1) * options.registersPerWriter);
    const versions = own.map(() => 1);
    for (let turn = 0; running; turn++) {
      const i = turn % own.length;
      await write(own[i]!, ++versions[i]!);
      await sleep(Math.random() * writePauseMs);
    }
  };

  let phase = 'setup';
  const progress = options.onProgress
    ? setInterval(() => options.onProgress!({ phase, elapsedMs: performance.now() - started, report: checkHistory(recorder.history) }), options.progressEveryMs ?? 5_000)
    : undefined;
  const entityCacheLookups: Record<string, number> = {};
  /** Adds a replica's lookups so far to the count (its counters start again from 0 when it restarts). */
  const countLookups = async (replica: number) => {
    for (const result of ['hit', 'miss', 'bypass']) {
      const lookups = await readCounter(urls[replica]!.replace(/\/graphql$/, '/metrics'), 'gateway_entity_cache_lookups_total', { result });
      entityCacheLookups[result] = (entityCacheLookups[result] ?? 0) + lookups;
    }
  };
  let restarts = 0;
  const fault = async (what: ConsistencyFault) => {
    if (what === 'restart-gateway') {
      const replica = ++restarts % urls.length;
      options.onFault?.(`restarting gateway replica ${replica}`, performance.now() - started);
      await countLookups(replica);
      await supergraph.restartGateway(replica);
    } else if (what === 'flushall') {
      options.onFault?.('FLUSHALL', performance.now() - started);
      await redis.client.flushall();
    } else {
      options.onFault?.('stopping Redis', performance.now() - started);
      await redis.stop();
      await sleep(options.redisDownMs ?? 3_000);
      options.onFault?.('starting Redis', performance.now() - started);
      await redis.start();
    }
  };
  let loops: Promise<void>[] = [];
  try {
    for (const current of phases) {
      phase = current.name;
      const phaseStarted = performance.now();
      recorder.phase(current.name, phaseStarted);
      // Started once the first phase is: no read belongs to the setup.
      if (loops.length === 0) loops = [...Array.from({ length: options.readers }, (_, i) => reader(i)), ...Array.from({ length: options.writers }, (_, i) => writer(i))];
      const faults = current.fault ? (current.faults ?? 1) : 0;
      for (let n = 1; n <= faults; n++) {
        await sleep(phaseStarted + (current.durationMs * n) / (faults + 1) - performance.now());
        await fault(current.fault!);
      }
      await sleep(phaseStarted + current.durationMs - performance.now());
    }
  } finally {
    running = false;
    clearInterval(progress);
    await Promise.all(loops);
  }
  for (let replica = 0; replica < urls.length; replica++) await countLookups(replica);
  return {
    history: recorder.history,
    report: checkHistory(recorder.history),
    paths: paths.map(({ name }) => name),
    requests,
    fromResponseCache,
    entityCacheLookups,
    durationMs: performance.now() - started,
  };
}
