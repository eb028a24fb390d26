// The catalog subgraph over real HTTP, seeded with the shared data set.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger, toGlobalId } from '@ordergraph/core';
import { type SubgraphService } from '@ordergraph/subgraph-kit';
import { seedData } from '@ordergraph/seed';
import { graphql, readCounter, token } from '@ordergraph/testkit';
import { loadCatalogConfig } from '../src/config.js';
import { createCatalogService } from '../src/server.js';

let service: SubgraphService;
let url: string;
let admin: string;
let alice: string;

const productId = (n: number) => toGlobalId('Product', `product-${String(n).padStart(4, '0')}`);
const seeded = seedData().products;
const RFC3339_UTC_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

beforeAll(async () => {
  service = await createCatalogService(loadCatalogConfig({ SEED: 'true', LOG_LEVEL: 'silent' }), createLogger('catalog', 'silent'));
  url = await service.listen(0, '127.0.0.1');
  admin = await token('ADMIN', 'user-0000');
  alice = await token('USER', 'user-0001');
});
afterAll(() => service.stop());

type Errors = { errors?: { extensions?: Record<string, unknown> }[] };
const codes = (body: Errors) => body.errors?.map((error) => error.extensions?.['code']);

const PRODUCT_FIELDS = 'id name price currentPrice description imageUrl attributes createdAt updatedAt';
const createMutation = `mutation ($input: CreateProductInput!) { createProduct(input: $input) { ${PRODUCT_FIELDS} } }`;
const updateMutation = `mutation ($id: ID!, $input: UpdateProductInput!) { updateProduct(id: $id, input: $input) { ${PRODUCT_FIELDS} } }`;

async function createProduct(input: Record<string, unknown>) {
  const { body } = await graphql(url, createMutation, { variables: { input }, token: admin });
  expect(body.errors).toBeUndefined();
  return body.data?.createProduct as Record<string, unknown> & { id: string; createdAt: string; updatedAt: string };
}

describe('product(id)', () => {
  const query = `query ($id: ID!) { product(id: $id) { ${PRODUCT_FIELDS} } }`;

  it('is readable anonymously, with prices from cents and RFC 3339 UTC timestamps', async () => {
    const { body } = await graphql(url, query, { variables: { id: productId(0) } });
    expect(body.errors).toBeUndefined();
    expect(body.data?.product).toEqual({
      id: productId(0),
      name: 'Red Lamp',
      price: seeded[0]!.priceCents / 100,
      currentPrice: seeded[0]!.priceCents / 100,
      description: 'A red lamp from the seed catalog.',
      imageUrl: null,
      attributes: null,
      createdAt: '2026-01-01T00:00:00.000Z',
      updatedAt: '2026-01-01T00:00:00.000Z',
    });
  });

  it('is readable by signed-in users too', async () => {
    const { body } = await graphql(url, query, { variables: { id: productId(1) }, token: alice });
    expect(body.data?.product).toMatchObject({ id: productId(1), name: 'Blue Lamp' });
  });

  it.each([
    ['unknown', toGlobalId('Product', 'nothing-here')],
    ['malformed', 'not-an-id!'],
    ['of another type', toGlobalId('User', 'user-0001')],
  ])('answers an %s ID with null and NOT_FOUND, resource and id', async (_kind, id) => {
    const { status, body } = await graphql(url, query, { variables: { id } });
    expect(status).toBe(200);
    expect(body.data?.product).toBeNull();
    expect(body.errors).toHaveLength(1);
    expect(body.errors?.[0]).toMatchObject({
      message: `Product with id ${id} not found`,
      path: ['product'],
      extensions: { code: 'NOT_FOUND', resource: 'Product', id },
    });
  });

  it('refuses a present but invalid token with 401', async () => {
    const { status, body } = await graphql(url, query, { variables: { id: productId(0) }, token: 'not.a.token' });
    expect(status).toBe(401);
    expect(codes(body)).toEqual(['UNAUTHENTICATED']);
  });
});

describe('products(limit, offset)', () => {
  const query = 'query ($limit: Int, $offset: Int) { products(limit: $limit, offset: $offset) { id } }';
  const ids = (body: { data?: Record<string, any> | null }) => (body.data?.products as { id: string }[]).map((product) => product.id);

  it('defaults to the 20 oldest, anonymously', async () => {
    const { body } = await graphql(url, query);
    expect(ids(body)).toEqual(Array.from({ length: 20 }, (_, i) => productId(i)));
  });

  it('pages with limit and offset', async () => {
    expect(ids((await graphql(url, query, { variables: { limit: 3, offset: 5 } })).body)).toEqual([productId(5), productId(6), productId(7)]);
    expect(ids((await graphql(url, query, { variables: { limit: 0 } })).body)).toEqual([]);
    expect(ids((await graphql(url, query, { variables: { limit: 100, offset: 150 } })).body).slice(0, 50)).toEqual(
      Array.from({ length: 50 }, (_, i) => productId(150 + i)),
    );
  });

  it.each([[{ limit: 101 }], [{ limit: -1 }], [{ offset: -3 }]])('rejects %j with BAD_USER_INPUT', async (variables) => {
    const { body } = await graphql(url, query, { variables });
    expect(codes(body)).toEqual(['BAD_USER_INPUT']);
  });
});

describe('_entities', () => {
  const query = 'query ($representations: [_Any!]!) { _entities(representations: $representations) { ... on Product { id name currentPrice } } }';
  const metrics = () => url.replace('/graphql', '/metrics');
  const products = (ids: string[]) => ids.map((id) => ({ __typename: 'Product', id }));

  it('resolves 20 product references with exactly one store query', async () => {
    const ids = Array.from({ length: 20 }, (_, i) => productId(40 + i));
    const finds = () => readCounter(metrics(), 'datastore_operations_total', { collection: 'products', operation: 'find' });
    const before = await finds();
    const { body } = await graphql(url, query, { variables: { representations: products(ids) } });
    const after = await finds();
    expect(body.errors).toBeUndefined();
    expect(body.data?._entities.map((product: { id: string }) => product.id)).toEqual(ids);
    expect(body.data?._entities[0]).toEqual({ id: ids[0], name: seeded[40]!.name, currentPrice: seeded[40]!.priceCents / 100 });
    expect(after - before).toBe(1);
  });

  it('answers an unknown or malformed reference with null and NOT_FOUND at its index', async () => {
    const unknown = toGlobalId('Product', 'ghost');
    const { body } = await graphql(url, query, { variables: { representations: products([productId(2), unknown, productId(3), 'garbage']) } });
    expect(body.data?._entities).toEqual([expect.objectContaining({ id: productId(2) }), null, expect.objectContaining({ id: productId(3) }), null]);
    // Errors come in the order the references failed: the malformed one fails before the batch query returns.
    expect(body.errors).toHaveLength(2);
    expect(body.errors).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: ['_entities', 1], extensions: { code: 'NOT_FOUND', resource: 'Product', id: unknown } }),
        expect.objectContaining({ path: ['_entities', 3], extensions: { code: 'NOT_FOUND', resource: 'Product', id: 'garbage' } }),
      ]),
    );
  });
});

describe('Cache-Control', () => {
  // The subgraph's own @cacheControl hints, as Apollo Server's cache-control plugin reads them (docs/operating.md).
  const header = async (query: string, variables?: Record<string, unknown>) => (await graphql(url, query, { ...(variables ? { variables } : {}) })).headers.get('cache-control');

  it('is the smallest maxAge of the fields a root query resolves, public', async () => {
    expect(await header('query ($id: ID!) { product(id: $id) { name } }', { id: productId(5) })).toBe('max-age=300, public');
    expect(await header('query ($id: ID!) { product(id: $id) { name currentPrice } }', { id: productId(5) })).toBe('max-age=60, public');
  });

  it('is no-store where a field selected has no hint, for every entity fetch, and for an answer with errors', async () => {
    expect(await header('query ($id: ID!) { product(id: $id) { name price } }', { id: productId(5) })).toBe('max-age=300, public');
    expect(await header('{ products(limit: 2) { name } }')).toBe('no-store');
    expect(await header('query ($r: [_Any!]!) { _entities(representations: $r) { ... on Product { name } } }', { r: [{ __typename: 'Product', id: productId(5) }] })).toBe('no-store');
    expect(await header('query ($id: ID!) { product(id: $id) { name } }', { id: 'garbage' })).toBe('no-store');
  });
});

describe('_searchProducts', () => {
  const query = 'query ($query: String!, $limit: Int!) { _searchProducts(query: $query, limit: $limit) { id score } }';
  const search = async (text: string, limit: number) => {
    const { body } = await graphql(url, query, { variables: { query: text, limit } });
    expect(body.errors).toBeUndefined();
    return body.data?._searchProducts as { id: string; score: number }[];
  };

  it('finds products by name for anyone, best first', async () => {
    const hits = await search('Red Lamp', 20);
    expect(hits[0]).toEqual({ id: productId(0), score: 3 });
    expect(hits.slice(1).every((hit) => hit.score < 3)).toBe(true);
  });

  it('is case-insensitive, orders equal scores by id and honours limit', async () => {
    const lamps = Array.from({ length: 10 }, (_, i) => ({ id: toGlobalId('Product', `product-000${i}`), score: 1.5 }));
    expect(await search('LAMP', 20)).toEqual(lamps.slice(0, 10));
    expect(await search('lamp', 3)).toEqual(lamps.slice(0, 3));
  });

  it('caps limit at 100', async () => {
    for (let i = 0; i < 101; i++) await createProduct({ name: `Capped Widget ${i}`, price: 1 });
    expect(await search('capped widget', 1000)).toHaveLength(100);
  });

  it('finds nothing for a blank query', async () => {
    expect(await search('  ', 20)).toEqual([]);
  });

  it('rejects a negative limit with BAD_USER_INPUT', async () => {
    const { body } = await graphql(url, query, { variables: { query: 'lamp', limit: -1 } });
    expect(codes(body)).toEqual(['BAD_USER_INPUT']);
  });
});

describe("what a write tells the gateway's entity cache", () => {
  it('names the product each committed write changed in extensions.invalidation, and an empty list for a refused one', async () => {
    const named = (id: string) => [{ kind: 'entity', subgraph: 'catalog', type: 'Product', key: { id } }];
    const created = await graphql(url, createMutation, { variables: { input: { name: 'Named Lamp', price: 10 } }, token: admin });
    const id = created.body.data?.createProduct.id as string;
    expect(created.body.extensions?.['invalidation']).toEqual(named(id));
    const updated = await graphql(url, updateMutation, { variables: { id, input: { name: 'Renamed Lamp' } }, token: admin });
    expect(updated.body.extensions?.['invalidation']).toEqual(named(id));
    const refused = await graphql(url, updateMutation, { variables: { id, input: { name: 'x' } }, token: alice });
    expect(codes(refused.body)).toEqual(['FORBIDDEN']);
    expect(refused.body.extensions?.['invalidation']).toEqual([]);
  });
});

describe('createProduct', () => {
  const valid = { name: 'Travel Kettle', price: 49.99 };

  it('creates a product with every field', async () => {
    const attributes = { colors: ['red', 'blue'], $where: 'just data', 'dotted.key': { n: 1.5, ok: true, none: null } };
    const created = await createProduct({
      name: '  Travel Kettle  ',
      price: 49.99,
      salePrice: 39.5,
      description: 'Boils water anywhere.',
      imageUrl: 'https://cdn.example.com/kettle.png',
      attributes,
    });
    expect(created).toMatchObject({
      name: 'Travel Kettle',
      price: 49.99,
      currentPrice: 39.5,
      description: 'Boils water anywhere.',
      imageUrl: 'https://cdn.example.com/kettle.png',
      attributes,
    });
    expect(created.createdAt).toMatch(RFC3339_UTC_MS);
    expect(created.updatedAt).toBe(created.createdAt);

    const { body } = await graphql(url, `query ($id: ID!) { product(id: $id) { ${PRODUCT_FIELDS} } }`, { variables: { id: created.id } });
    expect(body.data?.product).toEqual(created);
  });

  it('leaves optional fields null and charges the list price without a sale price', async () => {
    expect(await createProduct(valid)).toMatchObject({ price: 49.99, currentPrice: 49.99, description: null, imageUrl: null, attributes: null });
  });

  it('accepts any JSON value as attributes', async () => {
    for (const attributes of ['plain text', 7, [1, 'two', { three: 3 }], false]) {
      expect((await createProduct({ ...valid, attributes })).attributes).toEqual(attributes);
    }
  });

  it('accepts the longest name and description', async () => {
    const created = await createProduct({ ...valid, name: 'n'.repeat(200), description: 'd'.repeat(2000) });
    expect(created).toMatchObject({ name: 'n'.repeat(200), description: 'd'.repeat(2000) });
  });

  it('requires ADMIN', async () => {
    const asUser = await graphql(url, createMutation, { variables: { input: valid }, token: alice });
    expect(asUser.body.data).toBeNull();
    expect(asUser.body.errors?.[0]).toMatchObject({ message: 'Not authorized', path: ['createProduct'], extensions: { code: 'FORBIDDEN' } });
    expect(codes((await graphql(url, createMutation, { variables: { input: valid } })).body)).toEqual(['UNAUTHENTICATED']);
  });

  it.each([
    ['a blank name', { name: '   ' }, 'name'],
    ['a name over 200 characters', { name: 'n'.repeat(201) }, 'name'],
    ['a zero price', { price: 0 }, 'price'],
    ['a negative price', { price: -5 }, 'price'],
    ['a price with three decimals', { price: 1.005 }, 'price'],
    ['a price over the maximum', { price: 1_000_000.01 }, 'price'],
    ['a sale price equal to the price', { salePrice: 49.99 }, 'salePrice'],
    ['a sale price above the price', { salePrice: 60 }, 'salePrice'],
    ['a zero sale price', { salePrice: 0 }, 'salePrice'],
    ['a sale price with three decimals', { salePrice: 9.999 }, 'salePrice'],
    ['a description over 2000 characters', { description: 'd'.repeat(2001) }, 'description'],
  ])('rejects %s with BAD_USER_INPUT naming the field', async (_case, change, field) => {
    const { body } = await graphql(url, createMutation, { variables: { input: { ...valid, ...change } }, token: admin });
    expect(body.data).toBeNull();
    expect(body.errors).toHaveLength(1);
    expect(body.errors?.[0]).toMatchObject({ path: ['createProduct'], extensions: { code: 'BAD_USER_INPUT', field } });
  });

  it.each([['ftp://example.com/a.png'], ['javascript:alert(1)'], ['/relative/a.png'], ['not a url']])(
    'rejects the imageUrl %s: URL is an absolute http(s) URL',
    async (imageUrl) => {
      const { body } = await graphql(url, createMutation, { variables: { input: { ...valid, imageUrl } }, token: admin });
      expect(body.data ?? null).toBeNull();
      expect(codes(body)).toEqual(['BAD_USER_INPUT']);
    },
  );

  it('rejects an invalid URL literal in the document before execution', async () => {
    const { body } = await graphql(url, 'mutation { createProduct(input: { name: "X", price: 1, imageUrl: "not a url" }) { id } }', { token: admin });
    expect(codes(body)).toEqual(['GRAPHQL_VALIDATION_FAILED']);
  });

  it('accepts http as well as https image URLs', async () => {
    expect((await createProduct({ ...valid, imageUrl: 'http://example.com/a b.png' })).imageUrl).toBe('http://example.com/a%20b.png');
  });
});

describe('updateProduct', () => {
  /** As ADMIN unless another token is given; `null` sends none. */
  const update = (id: string, input: Record<string, unknown>, as: string | null = admin) =>
    graphql(url, updateMutation, { variables: { id, input }, ...(as === null ? {} : { token: as }) });

  it('changes only the fields given and stamps updatedAt', async () => {
    const created = await createProduct({ name: 'Mug', price: 12, description: 'Holds tea', attributes: { size: 'L' } });
    await new Promise((resolve) => setTimeout(resolve, 5));
    const { body } = await update(created.id, { name: ' Big Mug ' });
    expect(body.errors).toBeUndefined();
    const updated = body.data?.updateProduct;
    expect(updated).toEqual({ ...created, name: 'Big Mug', updatedAt: expect.stringMatching(RFC3339_UTC_MS) });
    expect(Date.parse(updated.updatedAt)).toBeGreaterThan(Date.parse(created.createdAt));
  });

  it('sets a sale price, which becomes the current price orders read through _entities', async () => {
    const created = await createProduct({ name: 'Scarf', price: 30 });
    expect((await update(created.id, { salePrice: 24.5 })).body.data?.updateProduct).toMatchObject({ price: 30, currentPrice: 24.5 });
    const { body } = await graphql(url, 'query ($representations: [_Any!]!) { _entities(representations: $representations) { ... on Product { currentPrice } } }', {
      variables: { representations: [{ __typename: 'Product', id: created.id }] },
    });
    expect(body.data?._entities).toEqual([{ currentPrice: 24.5 }]);
  });

  it('clears salePrice, description, imageUrl and attributes given as null', async () => {
    const created = await createProduct({ name: 'Tent', price: 200, salePrice: 150, description: 'Sleeps two', imageUrl: 'https://example.com/t.png', attributes: [1] });
    const { body } = await update(created.id, { salePrice: null, description: null, imageUrl: null, attributes: null });
    expect(body.data?.updateProduct).toMatchObject({ price: 200, currentPrice: 200, description: null, imageUrl: null, attributes: null });
  });

  it('keeps the sale price below a changed price', async () => {
    const created = await createProduct({ name: 'Drone', price: 100, salePrice: 80 });
    const { body } = await update(created.id, { price: 80 });
    expect(body.errors?.[0]).toMatchObject({ extensions: { code: 'BAD_USER_INPUT', field: 'salePrice' } });
    expect((await update(created.id, { price: 90, salePrice: 85 })).body.data?.updateProduct).toMatchObject({ price: 90, currentPrice: 85 });
  });

  it.each([
    ['a null name', { name: null }, 'name'],
    ['a null price', { price: null }, 'price'],
    ['a blank name', { name: '' }, 'name'],
    ['a name over 200 characters', { name: 'n'.repeat(201) }, 'name'],
    ['a price with three decimals', { price: 0.001 }, 'price'],
    ['a sale price not below the price', { salePrice: 10 }, 'salePrice'],
    ['a description over 2000 characters', { description: 'd'.repeat(2001) }, 'description'],
  ])('rejects %s with BAD_USER_INPUT and changes nothing', async (_case, input, field) => {
    const created = await createProduct({ name: 'Clock', price: 10 });
    const { body } = await update(created.id, input);
    expect(body.data).toBeNull();
    expect(body.errors?.[0]).toMatchObject({ path: ['updateProduct'], extensions: { code: 'BAD_USER_INPUT', field } });
    const after = await graphql(url, `query ($id: ID!) { product(id: $id) { ${PRODUCT_FIELDS} } }`, { variables: { id: created.id } });
    expect(after.body.data?.product).toEqual(created);
  });

  it('rejects an image URL that is not http(s)', async () => {
    expect(codes((await update(productId(9), { imageUrl: 'file:///etc/passwd' })).body)).toEqual(['BAD_USER_INPUT']);
  });

  it.each([
    ['unknown', toGlobalId('Product', 'ghost')],
    ['malformed', '???'],
  ])('answers an %s ID with NOT_FOUND', async (_kind, id) => {
    const { body } = await update(id, { name: 'Anything' });
    expect(body.data).toBeNull();
    expect(body.errors?.[0]).toMatchObject({ path: ['updateProduct'], extensions: { code: 'NOT_FOUND', resource: 'Product', id } });
  });

  it('requires ADMIN', async () => {
    expect(codes((await update(productId(8), { name: 'Mine now' }, alice)).body)).toEqual(['FORBIDDEN']);
    expect(codes((await update(productId(8), { name: 'Mine now' }, null)).body)).toEqual(['UNAUTHENTICATED']);
  });

  it('loses no update when several land at once', async () => {
    const created = await createProduct({ name: 'Helmet', price: 80 });
    const changes = [{ name: 'Safe Helmet' }, { price: 90 }, { salePrice: 70 }, { description: 'Certified' }, { attributes: { size: 'M' } }];
    const results = await Promise.all(changes.map((input) => update(created.id, input)));
    expect(results.map(({ body }) => body.errors)).toEqual(changes.map(() => undefined));
    const { body } = await graphql(url, `query ($id: ID!) { product(id: $id) { ${PRODUCT_FIELDS} } }`, { variables: { id: created.id } });
    expect(body.data?.product).toMatchObject({ name: 'Safe Helmet', price: 90, currentPrice: 70, description: 'Certified', attributes: { size: 'M' } });
  });
});

describe('seeding', () => {
  it('leaves the catalog empty unless SEED is set', async () => {
    const unseeded = await createCatalogService(loadCatalogConfig({ LOG_LEVEL: 'silent' }), createLogger('catalog', 'silent'));
    try {
      const unseededUrl = await unseeded.listen(0, '127.0.0.1');
      const { body } = await graphql(unseededUrl, '{ products { id } }');
      expect(body.data?.products).toEqual([]);
    } finally {
      await unseeded.stop();
    }
  });
});

describe('operations endpoints', () => {
  it('serves /healthz, /readyz and /metrics', async () => {
    const base = url.replace('/graphql', '');
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    expect(await (await fetch(`${base}/readyz`)).json()).toEqual({ status: 'ready' });
    expect(await (await fetch(`${base}/metrics`)).text()).toContain('datastore_operations_total');
  });
});
