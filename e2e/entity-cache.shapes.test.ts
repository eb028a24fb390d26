// The foreign federation shapes (@interfaceObject, @provides, null keys, node(id), @requires, unions, @override) with
// the entity cache on and every fetch made cacheable and shared: each answer, cold and then warm, is still the one
// written by hand, for every kind of caller.
import { Kind, parse } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphql, readCounter, startRedis, token, type TestRedis } from '@ordergraph/testkit';
import { serveShape, type ServedShape, type Shape } from './federation-shapes/harness.js';
import { SHAPES } from './federation-shapes/shapes.js';

let tokens: { ADMIN: string; USER: string };
beforeAll(async () => {
  tokens = { ADMIN: await token('ADMIN', 'user-0000'), USER: await token('USER', 'user-0001') };
});

async function answer(url: string, query: string, bearer?: string) {
  const { body } = await graphql(url, query, bearer ? { token: bearer } : {});
  return { data: body.data, errorCodes: (body.errors ?? []).map((error) => error.extensions?.['code'] as unknown) };
}

/** A minute for every type of every subgraph of the shape (these have no hints), each subgraph answering all alike. */
function everythingCached(shape: (typeof SHAPES)[number]): Record<string, string> {
  const ttls = shape.subgraphs.flatMap(({ name, typeDefs }) =>
    parse(typeDefs).definitions.flatMap((definition) =>
      definition.kind === Kind.OBJECT_TYPE_DEFINITION || definition.kind === Kind.OBJECT_TYPE_EXTENSION ? [`${name}.${definition.name.value}=60`] : [],
    ),
  );
  return { ENTITY_CACHE: 'on', ENTITY_CACHE_TTLS: [...new Set(ttls)].join(','), ENTITY_CACHE_SHARED_SUBGRAPHS: shape.subgraphs.map(({ name }) => name).join(',') };
}

for (const shape of SHAPES) {
  describe(`${shape.name}, entity cache on`, () => {
    let served: ServedShape;
    beforeAll(async () => {
      served = await serveShape(shape, everythingCached(shape));
    });
    afterAll(async () => {
      await served?.stop();
    });

    for (const { query, data, errorCodes = [] } of shape.queries) {
      it(query, async () => {
        const expected = { data, errorCodes };
        for (const round of ['cold', 'warm']) {
          for (const [who, bearer] of [['admin', tokens.ADMIN], ['user', tokens.USER], ['anonymous', undefined]] as const) {
            expect({ round, who, answer: await answer(served.gateway, query, bearer) }).toEqual({ round, who, answer: expected });
          }
        }
      });
    }

    it('served the warm answers from the cache', async () => {
      const lookups = (result: string) => readCounter(served.gateway.replace(/\/graphql$/, '/metrics'), 'gateway_entity_cache_lookups_total', { result });
      expect(await lookups('hit')).toBeGreaterThan(0);
      expect(await lookups('unavailable')).toBe(0);
    });

    it('looked each anonymous request up in the response cache once, however its plugins ask', async () => {
      // Cold and warm, anonymous: the only requests the response cache serves. Yoga's plugin and envelop's both ask.
      const anonymousRequests = shape.queries.length * 2;
      expect(await readCounter(served.gateway.replace(/\/graphql$/, '/metrics'), 'gateway_response_cache_lookups_total')).toBe(anonymousRequests);
    });
  });
}

// The same shapes with every entry kept per caller, in a private Redis, and this process holding one entry at a time:
// each caller's entries are its own, the in-process layer evicts on nearly every write, and warm answers come from Redis.
describe('every shape, entries per caller in Redis, one entry in process', () => {
  let redis: TestRedis;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.close();
  });

  for (const shape of SHAPES) {
    it(shape.name, async () => {
      const settings = { ...everythingCached(shape), ENTITY_CACHE_SHARED_SUBGRAPHS: '', ENTITY_CACHE_MEMORY_ENTRIES: '1', REDIS_URL: redis.url };
      const served = await serveShape(shape, settings);
      try {
        for (const { query, data, errorCodes = [] } of shape.queries) {
          for (const round of ['cold', 'warm', 'again']) {
            for (const [who, bearer] of [['admin', tokens.ADMIN], ['user', tokens.USER], ['anonymous', undefined]] as const) {
              expect({ query, round, who, answer: await answer(served.gateway, query, bearer) }).toEqual({ query, round, who, answer: { data, errorCodes } });
            }
          }
        }
        const lookups = (result: string) => readCounter(served.gateway.replace(/\/graphql$/, '/metrics'), 'gateway_entity_cache_lookups_total', { result });
        expect(await lookups('hit')).toBeGreaterThan(0);
      } finally {
        await served.stop();
      }
    });
  }
});

// A supergraph of another shape that writes: entities keyed by `upc` (no `id` anywhere), a root field naming its
// product by an argument that is not `id`, a list of them, references held by another subgraph, and a subgraph that
// declares nothing about its writes. Every read after the write shows it, for every caller, as the bare runtime does;
// with the generations in process and in a private Redis (whose reads the lookups of one turn share).
for (const where of ['in process', 'in Redis'] as const) {
  describe(`writes on a foreign supergraph keyed by upc, entity cache on, generations ${where}`, () => {
    const names = new Map([
      ['p1', 'Lamp'],
      ['p2', 'Desk'],
      ['p3', 'Chair'],
    ]);
    const shape: Shape = {
      name: 'writes by upc',
      subgraphs: [
        {
          name: 'a',
          typeDefs: `
            extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])
            type Product @key(fields: "upc") { upc: String! name: String! }
            type Query { product(upc: String!): Product products: [Product!]! }
            type Mutation { rename(upc: String!, name: String!): Product! }`,
          resolvers: {
            Query: {
              product: (_: unknown, { upc }: { upc: string }) => (names.has(upc) ? { upc } : null),
              products: () => [...names.keys()].map((upc) => ({ upc })),
            },
            Mutation: {
              rename: (_: unknown, { upc, name }: { upc: string; name: string }) => (names.set(upc, name), { upc }),
            },
            Product: { __resolveReference: ({ upc }: { upc: string }) => ({ upc }), name: ({ upc }: { upc: string }) => names.get(upc) },
          },
        },
        {
          name: 'b',
          typeDefs: `
            extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])
            type Product @key(fields: "upc") { upc: String! stock: Int! }
            type Query { topSeller: Product }`,
          resolvers: {
            Query: { topSeller: () => ({ upc: 'p1' }) },
            Product: { __resolveReference: ({ upc }: { upc: string }) => ({ upc }), stock: ({ upc }: { upc: string }) => upc.length * 7 },
          },
        },
      ],
      queries: [],
    };
    const READ = '{ product(upc: "p1") { name stock } products { upc name } topSeller { upc name stock } }';
    const readOne = (upc: string) => `{ product(upc: "${upc}") { upc name stock } products { upc name } }`;
    let served: ServedShape;
    let redis: TestRedis | undefined;
    beforeAll(async () => {
      if (where === 'in Redis') redis = await startRedis();
      served = await serveShape(shape, { ...everythingCached(shape), ...(redis ? { REDIS_URL: redis.url } : {}) });
    });
    afterAll(async () => {
      await served?.stop();
      await redis?.close();
    });

    it('drops what an undeclared write returns, whole types where it has no id, and serves nothing stale', async () => {
      const callers = [tokens.ADMIN, tokens.USER, undefined];
      for (let round = 0; round < 2; round++) for (const bearer of callers) await answer(served.gateway, READ, bearer);
      const hits = await readCounter(served.gateway.replace(/\/graphql$/, '/metrics'), 'gateway_entity_cache_lookups_total', { result: 'hit' });
      expect(hits).toBeGreaterThan(0);

      const renamed = await graphql(served.gateway, 'mutation { rename(upc: "p1", name: "Reading Lamp") { upc } }', { token: tokens.ADMIN });
      expect(renamed.body.errors).toBeUndefined();
      for (const bearer of callers) {
        const read = await answer(served.gateway, READ, bearer);
        expect(read).toEqual(await answer(served.runtime, READ, bearer));
        expect(read.data).toEqual({
          product: { name: 'Reading Lamp', stock: 14 },
          products: [{ upc: 'p1', name: 'Reading Lamp' }, { upc: 'p2', name: 'Desk' }, { upc: 'p3', name: 'Chair' }],
          topSeller: { upc: 'p1', name: 'Reading Lamp', stock: 14 },
        });
      }
    });

    it('reads in flight together, each naming its own product, some beside the write: none after its answer is stale', async () => {
      const callers = [tokens.ADMIN, tokens.USER, undefined];
      const burst = () => Promise.all(Array.from({ length: 30 }, (_, i) => ({ upc: `p${(i % 3) + 1}`, bearer: callers[i % 3] })).map(async (read) => ({ ...read, answer: await answer(served.gateway, readOne(read.upc), read.bearer) })));
      const expected = (upc: string) => ({
        data: { product: { upc, name: names.get(upc), stock: 14 }, products: [...names].map(([key, name]) => ({ upc: key, name })) },
        errorCodes: [],
      });
      for (const { upc, answer: read } of await burst()) expect(read).toEqual(expected(upc));

      // Reads sent beside the write may show either name; every read sent after its answer shows the new one.
      const [renamed] = await Promise.all([graphql(served.gateway, 'mutation { rename(upc: "p2", name: "Standing Desk") { upc } }', { token: tokens.USER }), burst()]);
      expect(renamed.body.errors).toBeUndefined();
      for (const { upc, answer: read } of await burst()) expect(read).toEqual(expected(upc));
      expect(names.get('p2')).toBe('Standing Desk');
      const hits = await readCounter(served.gateway.replace(/\/graphql$/, '/metrics'), 'gateway_entity_cache_lookups_total', { result: 'hit' });
      expect(hits).toBeGreaterThan(0);
    });

    it("keeps a product whose key holds NULs, quotes and another product's key apart from that product, for every caller", async () => {
      // An entry's key joins its parts with NULs and holds the representation's JSON (entity-cache.ts): this key tries
      // to end one part early and pose as p1's representation, in the root field's variables and in b's `_entities`.
      const forged = 'p1\u0000"public"\u0000{"__typename":"Product","upc":"p1"}';
      names.set(forged, 'Forged');
      const query = 'query ($upc: String!) { product(upc: $upc) { upc name stock } }';
      try {
        for (const round of ['cold', 'warm']) {
          for (const bearer of [tokens.ADMIN, tokens.USER, undefined]) {
            for (const upc of [forged, 'p1']) {
              const ask = (url: string) => graphql(url, query, { variables: { upc }, ...(bearer ? { token: bearer } : {}) });
              const read = (await ask(served.gateway)).body;
              expect({ round, upc, read }).toEqual({ round, upc, read: (await ask(served.runtime)).body });
              expect(read.data?.['product']).toEqual({ upc, name: names.get(upc), stock: upc.length * 7 });
            }
          }
        }
      } finally {
        names.delete(forged);
      }
    });
  });
}
