// The caches' guarantee on a supergraph we did not design: a request that begins after a write's response was received
// never reads an older value, whichever of two replicas it reaches and whichever cache answers it. The shape is
// foreign to ours: its subgraphs declare no invalidations (the gateway must read what a mutation changed from its
// result, and half the writes answer with a number, which names nothing), hint caching with their own @cacheControl,
// answer a cacheable root field with a bare number, list entities from a subgraph that does not own them, and compute a
// field from another subgraph's value (@requires). Checked as e2e/consistency.test.ts checks ours, through a Redis
// restart.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { checkHistory, formatConsistencyReport, graphql, HistoryRecorder, readCounter, startRedis, token, type TestRedis } from '@ordergraph/testkit';
import { serveShape, type ServedShape, type Shape } from './federation-shapes/harness.js';

const cacheControl = /* GraphQL */ `
  @link(url: "https://example.com/caching/v1.0", import: ["@cacheControl"])
  @composeDirective(name: "@cacheControl")
  enum CacheControlScope { PUBLIC PRIVATE }
  directive @cacheControl(maxAge: Int, scope: CacheControlScope, inheritMaxAge: Boolean) on FIELD_DEFINITION | OBJECT | INTERFACE | UNION
`;
const federation = (...imports: string[]) =>
  `extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: [${['@composeDirective', ...imports].map((name) => `"${name}"`).join(', ')}])`;

/** The registers: each item's version, bumped by the stock subgraph's mutation. */
const ITEMS = ['i1', 'i2', 'i3', 'i4'];
const versions = new Map(ITEMS.map((id) => [id, 0]));
/** What each restock also wrote, by the item and version it answered with. */
const sideEffects = new Map<string, { register: string; version: number }>();

const shape: Shape = {
  name: 'writable items, listed elsewhere',
  subgraphs: [
    {
      name: 'stock',
      typeDefs: /* GraphQL */ `
        ${federation('@key')}
        ${cacheControl}
        type Query { item(id: ID!): Item @cacheControl(maxAge: 60, scope: PUBLIC) level(id: ID!): Int @cacheControl(maxAge: 60, scope: PUBLIC) }
        type Mutation { bump(id: ID!): Item! bumpQuietly(id: ID!): Int! restock(id: ID!): Item! bumpThenFail(id: ID!): Item }
        type Item @key(fields: "id") @cacheControl(maxAge: 60, scope: PUBLIC) { id: ID! version: Int! }
      `,
      resolvers: {
        Query: { item: (_: unknown, { id }: { id: string }) => (versions.has(id) ? { id } : null), level: (_: unknown, { id }: { id: string }) => versions.get(id) },
        Mutation: {
          bump: (_: unknown, { id }: { id: string }) => {
            versions.set(id, versions.get(id)! + 1);
            return { id };
          },
          restock: (_: unknown, { id }: { id: string }) => {
            const next = ITEMS[(ITEMS.indexOf(id) + 1) % ITEMS.length]!;
            versions.set(id, versions.get(id)! + 1);
            versions.set(next, versions.get(next)! + 1);
            sideEffects.set(`${id}:${versions.get(id)}`, { register: next, version: versions.get(next)! });
            return { id };
          },
          bumpThenFail: (_: unknown, { id }: { id: string }) => {
            versions.set(id, versions.get(id)! + 1);
            throw new Error('failed after writing');
          },
          bumpQuietly: (_: unknown, { id }: { id: string }) => {
            versions.set(id, versions.get(id)! + 1);
            return versions.get(id);
          },
        },
        Item: { __resolveReference: ({ id }: { id: string }) => ({ id }), version: ({ id }: { id: string }) => versions.get(id) },
      },
    },
    {
      name: 'shelf',
      typeDefs: /* GraphQL */ `
        ${federation('@key', '@external', '@requires')}
        ${cacheControl}
        type Query { shelf: [Item!]! @cacheControl(maxAge: 60, scope: PUBLIC) }
        type Item @key(fields: "id") @cacheControl(maxAge: 60, scope: PUBLIC) {
          id: ID!
          version: Int! @external
          label: String! @requires(fields: "version")
        }
      `,
      resolvers: {
        Query: { shelf: () => ITEMS.map((id) => ({ id })) },
        Item: { __resolveReference: (reference: { id: string; version?: number }) => reference, label: ({ version }: { version: number }) => `v${version}` },
      },
    },
  ],
  queries: [],
};

/** Each read path: its name, who sends it, its query, and whether it reads one item (by `$id`) or the whole shelf. */
const PATHS = [
  { path: 'item, anonymous (response cache, root-field entry)', viewer: 'anonymous', query: 'query ($id: ID!) { item(id: $id) { id version } }', perItem: true },
  { path: 'item, user (root-field entry)', viewer: 'user', query: 'query ($id: ID!) { item(id: $id) { id version } }', perItem: true },
  { path: 'shelf, anonymous (response cache, listed entities)', viewer: 'anonymous', query: '{ shelf { id version } }', perItem: false },
  { path: 'shelf labels, user (entities, @requires)', viewer: 'user', query: '{ shelf { id label } }', perItem: false },
  { path: 'level, anonymous (response cache, scalar root field)', viewer: 'anonymous', query: 'query ($id: ID!) { level(id: $id) }', perItem: true },
  { path: 'level, user (scalar root field)', viewer: 'user', query: 'query ($id: ID!) { level(id: $id) }', perItem: true },
] as const;

type Item = { id: string; version?: number; label?: string };
const versionOf = (item: Item) => item.version ?? Number(item.label?.slice(1));

let redis: TestRedis;
let served: ServedShape;
let user: string;
beforeAll(async () => {
  redis = await startRedis();
  user = await token('USER', 'user-0001');
  // Rate limits far above what the readers send: refusals would be failed reads, not a test of the caches.
  served = await serveShape(shape, { REDIS_URL: redis.url, ENTITY_CACHE: 'on', ENTITY_CACHE_SHARED_SUBGRAPHS: 'stock,shelf', RATE_LIMIT_MAX: '1000000' }, 2);
});
afterAll(async () => {
  await served?.stop();
  await redis?.close();
});

it('never serves a read that began after a write an older version, on either replica, by any path, through a Redis restart', { timeout: 40_000 }, async () => {
  const recorder = new HistoryRecorder();
  let stopping = false;
  const replicaOf = (n: number) => n % served.gateways.length;

  const writer = async (item: string, first: number) => {
    for (let n = first; !stopping; n++) {
      const invokedAt = performance.now();
      // Every other write answers with a number only: nothing in its result names what it changed.
      const mutation = ['mutation ($id: ID!) { bump(id: $id) { id version } }', 'mutation ($id: ID!) { bump: bumpQuietly(id: $id) }', 'mutation ($id: ID!) { bump: restock(id: $id) { id version } }'][n % 3]!;
      const { status, body } = await graphql(served.gateways[replicaOf(n)]!, mutation, { variables: { id: item }, token: user }).catch(
        (error: unknown) => ({ status: 0, body: { errors: [{ message: String(error) }], data: undefined } }),
      );
      const bumped = (body.data as { bump?: Item | number } | undefined)?.bump;
      const version = typeof bumped === 'number' ? bumped : bumped?.version;
      if (status === 200 && !body.errors && version !== undefined) {
        const acknowledgedAt = performance.now();
        recorder.write({ register: item, version, invokedAt, acknowledgedAt });
        const also = sideEffects.get(`${item}:${version}`);
        if (also) recorder.write({ ...also, invokedAt, acknowledgedAt });
      }
      else recorder.failedWrite({ register: item, version: -1, invokedAt, endedAt: performance.now(), error: JSON.stringify(body.errors) });
      await new Promise((resolve) => setTimeout(resolve, 15));
    }
  };
  const reader = async (index: number) => {
    for (let n = index; !stopping; n++) {
      const { path, viewer, query, perItem } = PATHS[n % PATHS.length]!;
      const replica = replicaOf(n + index);
      const item = ITEMS[n % ITEMS.length]!;
      const startedAt = performance.now();
      const { status, body } = await graphql(served.gateways[replica]!, query, { ...(perItem ? { variables: { id: item } } : {}), ...(viewer === 'user' ? { token: user } : {}) }).catch(
        (error: unknown) => ({ status: 0, body: { errors: [{ message: String(error) }], data: undefined } }),
      );
      const endedAt = performance.now();
      const data = body.data as { item?: Item; shelf?: Item[]; level?: number } | undefined;
      const items = perItem ? (data?.item ? [data.item] : typeof data?.level === 'number' ? [{ id: item, version: data.level }] : []) : (data?.shelf ?? []);
      if (status !== 200 || body.errors || items.length === 0) {
        recorder.failedRead({ path, replica, startedAt, endedAt, error: JSON.stringify(body.errors ?? status) });
        continue;
      }
      for (const seen of items) recorder.read({ register: seen.id, path, replica, startedAt, endedAt, version: versionOf(seen) });
    }
  };

  recorder.phase('steady');
  const workers = [...ITEMS.map((item, i) => writer(item, i)), ...Array.from({ length: 6 }, (_, i) => reader(i))];
  await new Promise((resolve) => setTimeout(resolve, 5_000));
  recorder.phase('redis restarted');
  await redis.stop();
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  await redis.start();
  recorder.phase('after the restart');
  await new Promise((resolve) => setTimeout(resolve, 6_000));
  stopping = true;
  await Promise.all(workers);

  const report = checkHistory(recorder.history);
  console.log(`consistency on a foreign shape:\n${formatConsistencyReport(report, { staleShown: 10 })}`);
  const metric = (name: string, result: string) =>
    Promise.all(served.gateways.map((url) => readCounter(url.replace(/\/graphql$/, '/metrics'), name, { result }))).then((counts) => counts.reduce((sum, count) => sum + count, 0));

  // Every path read, through both replicas, and both caches answered some reads: the guarantee was put to the test.
  expect(report.paths.map(({ path }) => path).sort()).toEqual(PATHS.map(({ path }) => path).sort());
  for (const path of report.paths) expect({ path: path.path, enough: path.reads >= 40 && path.byReplica.every((reads) => reads > 0) }).toEqual({ path: path.path, enough: true });
  expect(report.writes).toBeGreaterThan(50);
  expect(report.failedReads).toBe(0);
  expect(await metric('gateway_response_cache_lookups_total', 'hit')).toBeGreaterThan(0);
  expect(await metric('gateway_entity_cache_lookups_total', 'hit')).toBeGreaterThan(0);
  expect(report.impossible).toEqual([]);
  const stale = Object.fromEntries(
    report.paths.filter((path) => path.stale > 0).map((path) => [path.path, `${path.stale} stale, up to ${path.worstBehindVersions} versions and ${Math.round(path.worstBehindMs)} ms behind`]),
  );
  expect(stale).toEqual({});
});

it('shows a write\'s side effect, which its answer does not name, and a failed write\'s, to every read that begins after it, by every path', async () => {
  const read = async (bearer: string | undefined) => {
    const { body } = await graphql(served.gateways[0]!, '{ item(id: "i3") { version } level(id: "i3") shelf { id version label } }', bearer ? { token: bearer } : {});
    const data = body.data as { item: Item; level: number; shelf: Item[] };
    const listed = data.shelf.find((item) => item.id === 'i3')!;
    return [data.item.version, data.level, listed.version, Number(listed.label!.slice(1))];
  };
  for (const bearer of [undefined, user]) {
    // Twice, so that the second is answered from the caches.
    await read(bearer);
    const before = versions.get('i3')!;
    expect(await read(bearer)).toEqual([before, before, before, before]);
    // Restocking i2 restocks i3 too; the answer names i2 alone.
    const { body } = await graphql(served.gateways[1]!, 'mutation { restock(id: "i2") { id } }', { token: user });
    expect(body.errors).toBeUndefined();
    expect(await read(bearer)).toEqual([before + 1, before + 1, before + 1, before + 1]);
    // A write that fails after it committed: its answer is an error.
    expect((await graphql(served.gateways[1]!, 'mutation { bumpThenFail(id: "i3") { id } }', { token: user })).body.errors).toHaveLength(1);
    expect(await read(bearer)).toEqual([before + 2, before + 2, before + 2, before + 2]);
  }
});
