// The entity cache's parts that need no process: what a subgraph fetch may keep, for how long and for whom
// (fetch-policy.ts), and the bounds and generations of its in-process store (entity-store.ts).
import { buildSchema, parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { cacheHints } from '../../src/caching/cache-control.js';
import { BoundedEntries, memoryEntityStore } from '../../src/caching/entity-store.js';
import { entityKeys, fetchShape, graphValue, subgraphTypes, type PolicySettings } from '../../src/caching/fetch-policy.js';

const schema = buildSchema(`
  enum CacheControlScope { PUBLIC PRIVATE }
  directive @cacheControl(maxAge: Int, scope: CacheControlScope, inheritMaxAge: Boolean) on FIELD_DEFINITION | OBJECT | INTERFACE | UNION
  directive @authenticated on FIELD_DEFINITION | OBJECT
  directive @join__type(graph: String!, key: String) repeatable on OBJECT | INTERFACE
  interface Node { id: ID! }
  type Query { shelf: Shelf product(id: ID!): Product @cacheControl(maxAge: 300) me: Account @cacheControl(maxAge: 30, scope: PRIVATE) version: String node(id: ID!): Node @cacheControl(maxAge: 10) }
  type Product @join__type(graph: "catalog", key: "id") @join__type(graph: "orders", key: "id") { id: ID! name: String! @cacheControl(maxAge: 3600) price: Float! secret: String @authenticated @cacheControl(maxAge: 50) related: Product @cacheControl(maxAge: 40) }
  type Shelf @cacheControl(maxAge: 120) { id: ID! label: String owner: Account }
  type Account implements Node @join__type(graph: "users", key: "id") @cacheControl(maxAge: 20, scope: PRIVATE) { id: ID! email: String }
`);
const served = { schema, hints: cacheHints(schema), keys: entityKeys(schema) };
const settings: PolicySettings = { ttls: {}, maxTtlSeconds: 1000, sharedSubgraphs: new Set(['catalog']) };
const entities = (selection: string, subgraph = 'catalog', overrides: Partial<PolicySettings> = {}) => {
  const shape = fetchShape(served, parse(`query ($representations: [_Any!]!) { _entities(representations: $representations) { ${selection} } }`), subgraph, { ...settings, ...overrides });
  if (shape.kind !== 'entities') throw new Error(`not an entity fetch: ${shape.kind}`);
  return Object.fromEntries(shape.policies);
};
const rootShape = (query: string, subgraph = 'catalog', overrides: Partial<PolicySettings> = {}) => fetchShape(served, parse(query), subgraph, { ...settings, ...overrides });
const root = (query: string, subgraph = 'catalog', overrides: Partial<PolicySettings> = {}) => {
  const shape = rootShape(query, subgraph, overrides);
  return shape.kind === 'root' ? shape.policy : shape.kind;
};

describe('what a subgraph fetch may keep', () => {
  it("an entity's maxAge: its type's hint, lowered by each field selected; a field without one inherits the type's", () => {
    expect(entities('... on Product { name }')).toEqual({ Product: { maxAge: 1000, shared: true, types: [] } });
    expect(entities('... on Product { name price }')['Product']!.maxAge).toBe(0);
    expect(entities('... on Shelf { label }')['Shelf']).toEqual({ maxAge: 120, shared: true, types: [] });
    expect(entities('... on Product { name related { name } }')['Product']).toEqual({ maxAge: 40, shared: true, types: ['Product'] });
  });

  it('ENTITY_CACHE_TTLS replaces the hints per subgraph and type, 0 never caches, and the maximum caps it', () => {
    expect(entities('... on Product { name price }', 'catalog', { ttls: { 'catalog.Product': 60 } })['Product']!.maxAge).toBe(60);
    expect(entities('... on Product { name }', 'catalog', { ttls: { 'catalog.Product': 0 } })['Product']!.maxAge).toBe(0);
    expect(entities('... on Product { name }', 'catalog', { ttls: { 'other.Product': 5 }, maxTtlSeconds: 10 })['Product']!.maxAge).toBe(10);
  });

  it('ENTITY_CACHE_TTLS of the types a root-field fetch returns apply to it, unless `subgraph.Query` is set', () => {
    const product = 'query ($id: ID!) { product(id: $id) { id name } }';
    expect(root(product, 'catalog', { ttls: { 'catalog.Product': 60 } })).toMatchObject({ maxAge: 60 });
    expect(root(product, 'catalog', { ttls: { 'catalog.Product': 60, 'catalog.Query': 5 } })).toMatchObject({ maxAge: 5 });
    expect(root(product, 'catalog', { ttls: { 'users.Product': 60 } })).toMatchObject({ maxAge: 300 });
    // Through an interface: the settings of every type it may stand for, the smallest winning.
    expect(root('query ($id: ID!) { node(id: $id) { id } }', 'catalog', { ttls: { 'catalog.Account': 3 } })).toMatchObject({ maxAge: 3 });
  });

  it('shares an entry only when nothing selected is PRIVATE or restricted, from a subgraph that answers all alike', () => {
    expect(entities('... on Shelf { label owner { email } }')['Shelf']).toEqual({ maxAge: 20, shared: false, types: ['Account'] });
    expect(entities('... on Account { email }')['Account']!.shared).toBe(false);
    expect(entities('... on Product { name secret }')['Product']).toEqual({ maxAge: 50, shared: false, types: [] });
    expect(entities('... on Product { name }', 'users')['Product']!.shared).toBe(false);
    // A PRIVATE type reached through an interface, or one an interface may stand for.
    expect(root('query ($id: ID!) { node(id: $id) { ... on Account { email } } }')).toMatchObject({ shared: false });
    expect(root('query ($id: ID!) { node(id: $id) { id } }')).toMatchObject({ shared: false });
  });

  it('an object selected for its key fields alone is a reference: a write to it cannot change the answer', () => {
    expect(entities('... on Shelf { label owner { __typename id } }')['Shelf']!.types).toEqual([]);
    expect(entities('... on Shelf { label owner { ... on Account { id } } }')['Shelf']!.types).toEqual([]);
    expect(entities('... on Shelf { label owner { id email } }')['Shelf']!.types).toEqual(['Account']);
    // Shelf has no key: an object of it is never a mere reference.
    expect(root('{ shelf { id } }')).toMatchObject({ types: ['Shelf'] });
  });

  it('a root field naming its entity by ID is kept as that entity; any other root field by the types it holds', () => {
    expect(rootShape('query ($id: ID!) { product(id: $id) { name related { name } } }')).toMatchObject({
      policy: { types: ['Product'] },
      entity: { type: 'Product', id: { variable: 'id' } },
    });
    expect(rootShape('{ product(id: "p1") { name } }')).toMatchObject({ policy: { types: [] }, entity: { type: 'Product', id: { value: 'p1' } } });
    // An interface, a type without a key, two root fields: no entity.
    expect(rootShape('query ($id: ID!) { node(id: $id) { id } }')).not.toHaveProperty('entity');
    expect(rootShape('{ shelf { id } }')).not.toHaveProperty('entity');
    expect(rootShape('{ product(id: "p1") { name } version }')).not.toHaveProperty('entity');
  });

  it('says whether a root field answers no object: what no write names, which every write may change', () => {
    expect(rootShape('{ version }')).toMatchObject({ values: true });
    expect(rootShape('{ product(id: "p1") { name } version }')).toMatchObject({ values: true });
    expect(rootShape('{ shelf { id } __typename }')).toMatchObject({ values: false });
    expect(rootShape('{ product(id: "p1") { name } }')).toMatchObject({ values: false });
  });

  it('keeps nothing of a field the schema does not know', () => {
    expect(entities('... on Product { name internal }')['Product']!.maxAge).toBe(0);
  });

  it('root-field fetches: the smallest maxAge over the fields; only queries, and only one unaliased _entities', () => {
    expect(root('query ($id: ID!) { product(id: $id) { id name } }')).toEqual({ maxAge: 300, shared: true, types: [] });
    expect(root('{ me { email } }')).toEqual({ maxAge: 30, shared: false, types: ['Account'] });
    expect(root('{ version }')).toMatchObject({ maxAge: 0 });
    expect(root('mutation { touch }')).toBe('uncached');
    expect(root('query ($representations: [_Any!]!) { a: _entities(representations: $representations) { ... on Product { name } } }')).toBe('uncached');
  });
});

describe('what a subgraph may have written when it says nothing', () => {
  it("is every object type its @join__type names, found by the graph value composition gives the subgraph's name", () => {
    const supergraph = buildSchema(`
      enum join__Graph { STOCK MY_SHELF _1ST }
      directive @join__type(graph: join__Graph!, key: String) repeatable on OBJECT | INTERFACE
      type Query { item: Item }
      type Item @join__type(graph: STOCK, key: "id") @join__type(graph: MY_SHELF, key: "id") { id: ID! }
      type Shelf @join__type(graph: MY_SHELF) { id: ID! }
      type Edition @join__type(graph: _1ST) { id: ID! }
    `);
    const types = subgraphTypes(supergraph);
    expect(['stock', 'my-shelf', '1st', 'unknown'].map((name) => types.get(graphValue(name)))).toEqual([new Set(['Item']), new Set(['Item', 'Shelf']), new Set(['Edition']), undefined]);
  });
});

describe('the in-process store', () => {
  it('is bounded in entries and in bytes, the oldest going first unless read since it was last passed over', () => {
    const entries = new BoundedEntries({ entries: 2, bytes: 1000 });
    const later = Date.now() + 60_000;
    entries.set('a', 's', undefined, 'A', later);
    entries.set('b', 's', undefined, 'B', later);
    expect(entries.get('a', 's', undefined)).toBe('A');
    entries.set('c', 's', undefined, 'C', later);
    expect([entries.get('a', 's', undefined), entries.get('b', 's', undefined), entries.get('c', 's', undefined)]).toEqual(['A', undefined, 'C']);
    // Every entry read: one pass unmarks them, and the first passed over goes; the new one never does.
    const all = new BoundedEntries({ entries: 2, bytes: 1000 });
    all.set('x', 's', undefined, 'X', later);
    all.set('y', 's', undefined, 'Y', later);
    expect([all.get('x', 's', undefined), all.get('y', 's', undefined)]).toEqual(['X', 'Y']);
    all.set('z', 's', undefined, 'Z', later);
    expect([all.get('x', 's', undefined), all.get('y', 's', undefined), all.get('z', 's', undefined)]).toEqual([undefined, 'Y', 'Z']);
    const bytes = new BoundedEntries({ entries: 100, bytes: 100 });
    bytes.set('x', 's', undefined, 'y'.repeat(30), later);
    bytes.set('z', 's', undefined, 'y'.repeat(30), later);
    expect(bytes.size.bytes).toBeLessThanOrEqual(100);
    expect(bytes.get('x', 's', undefined)).toBeUndefined();
    bytes.set('big', 's', undefined, 'y'.repeat(100), later);
    expect(bytes.get('big', 's', undefined)).toBeUndefined();
  });

  it('serves an entry only with the stamp it was kept with, both parts, and not past its TTL', () => {
    const entries = new BoundedEntries({ entries: 10, bytes: 10_000 });
    entries.set('a', 'one', undefined, 'A', Date.now() + 60_000);
    expect(entries.get('a', 'two', undefined)).toBeUndefined();
    expect(entries.get('a', 'one', undefined)).toBeUndefined();
    entries.set('b', 'one', undefined, 'B', Date.now() - 1);
    expect(entries.get('b', 'one', undefined)).toBeUndefined();
    // Its own entity's generation is the stamp's other part.
    entries.set('c', 'one', 'x', 'C', Date.now() + 60_000);
    expect(entries.get('c', 'one', 'x')).toBe('C');
    expect(entries.get('c', 'one', 'y')).toBeUndefined();
    expect(entries.get('c', 'one', 'x')).toBeUndefined();
  });

  it('a bumped generation changes the stamp of every entry depending on it, and nothing else', async () => {
    const store = memoryEntityStore({ entries: 100, bytes: 100_000 });
    const shared = ['p:Product', 't:Review'];
    const dependencies = [
      { shared, own: 'e:Product:1' },
      { shared, own: 'e:Product:2' },
      { shared: ['p:Product', 't:Product'] },
    ];
    // Each entry's stamp as one text, to compare: its shared part and its own.
    const stampsNow = async () => {
      const stamps = (await store.stamps(dependencies))!;
      return { stamps, joined: stamps.shared.map((part, n) => `${part}|${stamps.own[n] ?? ''}`) };
    };
    const before = await stampsNow();
    store.write([{ key: 'k', stamp: before.stamps.shared[0]!, own: before.stamps.own[0], value: 'v', ttlMs: 60_000 }]);
    expect(await store.read(['k'], before.stamps)).toEqual(['v']);
    await store.bump(['e:Product:1']);
    const after = await stampsNow();
    expect(after.joined[0]).not.toBe(before.joined[0]);
    expect(after.joined.slice(1)).toEqual(before.joined.slice(1));
    expect(await store.read(['k'], after.stamps)).toEqual([undefined]);
    // A generation shared by entries of a kind changes each of their stamps.
    await store.bump(['t:Review']);
    const shared2 = await stampsNow();
    expect(shared2.joined.map((stamp, n) => stamp === after.joined[n])).toEqual([false, false, true]);
    await store.purgeAll();
    expect((await stampsNow()).joined[2]).not.toBe(shared2.joined[2]);
  });
});
