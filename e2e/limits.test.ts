// Operation limits at the gateway: depth, complexity, aliases, tokens, directives per field and duplicated fields, each
// refused with its code and figures before any subgraph is called, while graphql-js's introspection query stays allowed.
import { getIntrospectionQuery } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toGlobalId } from '@ordergraph/core';
import { graphql, token } from '@ordergraph/testkit';
import { startSupergraph, type Supergraph } from '@ordergraph/testkit/e2e';

let supergraph: Supergraph;
let shallow: Supergraph;
let admin: string;
const aliceId = toGlobalId('User', 'user-0001');

beforeAll(async () => {
  [supergraph, shallow] = await Promise.all([startSupergraph(), startSupergraph({ gatewayEnv: { MAX_DEPTH: '5' } })]);
  admin = await token('ADMIN', 'user-0000');
});
afterAll(async () => {
  await supergraph?.stop();
  await shallow?.stop();
});

/** Sends an operation and checks that no subgraph was asked anything for it. */
async function refused(target: Supergraph, query: string, options: { variables?: Record<string, unknown>; token?: string } = {}) {
  const before = await target.subgraphRequests();
  const response = await graphql(target.url, query, options);
  expect(await target.subgraphRequests()).toBe(before);
  expect(response.body.data ?? undefined).toBeUndefined();
  expect(response.body.errors).toHaveLength(1);
  return { status: response.status, error: response.body.errors![0]! };
}

/** `user { orders { user { orders ... { id } } } } }`: a chain of `depth` fields, each list of one item. */
function nested(depth: number): string {
  let selection = 'id';
  for (let level = depth - 1; level >= 2; level--) selection = `${level % 2 === 0 ? 'orders(limit: 1)' : 'user'} { ${selection} }`;
  return `query ($id: ID!) { user(id: $id) { ${selection} } }`;
}

describe('depth', () => {
  it('allows 7 levels by default and refuses 8 with DEPTH_LIMIT_EXCEEDED, the limit and the depth', async () => {
    const ok = await graphql(supergraph.url, nested(7), { variables: { id: aliceId }, token: admin });
    expect(ok.body.errors).toBeUndefined();
    const { status, error } = await refused(supergraph, nested(8), { variables: { id: aliceId }, token: admin });
    expect(status).toBe(400);
    expect(error.extensions).toEqual({ code: 'DEPTH_LIMIT_EXCEEDED', maxDepth: 7, depth: 8 });
  });

  it('honours MAX_DEPTH=5', async () => {
    expect((await graphql(shallow.url, nested(5), { variables: { id: aliceId }, token: admin })).body.errors).toBeUndefined();
    const { error } = await refused(shallow, nested(6), { variables: { id: aliceId }, token: admin });
    expect(error.extensions).toEqual({ code: 'DEPTH_LIMIT_EXCEEDED', maxDepth: 5, depth: 6 });
  });

  it('counts fields inside fragments, not the fragments themselves', async () => {
    const query = `query ($id: ID!) { user(id: $id) { ...A } }
      fragment A on User { orders { ...B } }
      fragment B on Order { user { orders { ... on Order { user { orders { user { id } } } } } } }`;
    const { error } = await refused(supergraph, query, { variables: { id: aliceId }, token: admin });
    expect(error.extensions).toMatchObject({ code: 'DEPTH_LIMIT_EXCEEDED', depth: 8 });
  });
});

describe('complexity', () => {
  it('multiplies a list by its limit argument and refuses over 5000 with COMPLEXITY_LIMIT_EXCEEDED', async () => {
    const query = 'query ($n: Int) { products(limit: $n) { id name } }';
    // 1 + n x 2
    expect((await graphql(supergraph.url, query, { variables: { n: 100 } })).body.errors).toBeUndefined();
    const { status, error } = await refused(supergraph, query, { variables: { n: 2500 } });
    expect(status).toBe(400);
    expect(error.extensions).toEqual({ code: 'COMPLEXITY_LIMIT_EXCEEDED', maxComplexity: 5000, complexity: 5001 });
  });

  it('multiplies a list without a size argument by 10, and nested lists multiply', async () => {
    const query = `{ users(limit: 10) { orders(limit: 40) { id items { quantity product { name } } } } }`;
    const { error } = await refused(supergraph, query, { token: admin });
    // users 1 + 10 x orders (1 + 40 x (id 1 + items (1 + 10 x (quantity 1 + product (1 + name 1)))))
    expect(error.extensions).toMatchObject({ code: 'COMPLEXITY_LIMIT_EXCEEDED', complexity: 1 + 10 * (1 + 40 * (1 + (1 + 10 * (1 + (1 + 1))))) });
  });

  it('keeps every variant of the standard introspection query allowed, and reads the schema', async () => {
    for (const options of [{}, { descriptions: true, specifiedByUrl: true, directiveIsRepeatable: true, schemaDescription: true, inputValueDeprecation: true, oneOf: true }]) {
      const { status, body } = await graphql(supergraph.url, getIntrospectionQuery(options));
      expect(status).toBe(200);
      expect(body.errors).toBeUndefined();
      expect(body.data!.__schema.types.map((type: { name: string }) => type.name)).toContain('Product');
    }
  });
});

describe('demand control: @cost and @listSize', () => {
  /** The cost the gateway reports for a traced operation: estimated, the limit it was held to, and actual. */
  async function estimated(query: string, options: { variables?: Record<string, unknown>; token?: string } = {}) {
    const { body } = await graphql(supergraph.url, query, { ...options, headers: { 'x-ordergraph-tracing': '1' } });
    expect(body.errors).toBeUndefined();
    return body.extensions?.['cost'];
  }

  it('prices a list by its slicing argument, its default when not given, and reports the estimate when tracing is on', async () => {
    // products @listSize(slicingArguments: ["limit"]), limit defaults to 20: 1 + 20 x (id 1)
    expect(await estimated('{ products { id } }')).toEqual({ estimated: 21, max: 5000, actual: 21 });
    expect(await estimated('{ products(limit: 3) { id } }')).toEqual({ estimated: 4, max: 5000, actual: 4 });
    expect((await graphql(supergraph.url, '{ products { id } }')).body.extensions?.['cost']).toBeUndefined();
  });

  it("adds a field's @cost weight and multiplies by its assumed size", async () => {
    // search @cost(weight: 10) @listSize(assumedSize: 20): 10 + 20 x (id 1 + name 1)
    // Actual: 10 + (id 1 + name 1) for each hit that came back.
    const search = await estimated('{ search(query: "lamp") { ... on Product { id name } } }');
    expect(search).toEqual({ estimated: 50, max: 5000, actual: expect.any(Number) });
    const { body } = await graphql(supergraph.url, '{ search(query: "lamp") { ... on Product { id name } } }');
    const hits = (body.data!['search'] as { id?: string }[]).filter((hit) => hit.id !== undefined).length;
    expect(search.actual).toBe(10 + 2 * hits);
  });

  it('multiplies only the sized fields of a connection', async () => {
    // usersConnection @listSize(slicingArguments: ["first", "last"], sizedFields: ["edges"]): 1 + totalCount 1 + 50 x (edges 1 + cursor 1)
    // Actual: the same, with the edges that came back (at most 50) in place of 50.
    expect(await estimated('{ usersConnection(first: 50) { totalCount edges { cursor } } }', { token: admin })).toEqual({ estimated: 102, max: 5000, actual: 102 });
    expect(await estimated('{ usersConnection(first: 50, filter: { role: ADMIN }) { totalCount edges { cursor } } }', { token: admin })).toMatchObject({ estimated: 102, actual: 1 + 1 + 1 * 2 });
  });

  it('measures one document again for every size and condition its variables give, whatever IDs they carry', async () => {
    // The complexity is kept per document and the variables it depends on (sizes, @include), not per ID.
    const query = 'query ($id: ID!, $n: Int = 30, $all: Boolean!) { user(id: $id) { orders(limit: $n) { id items @include(if: $all) { quantity } } } }';
    const bob = toGlobalId('User', 'user-0002');
    const cost = async (variables: Record<string, unknown>) => (await estimated(query, { variables, token: admin }))?.estimated as number;
    // user 1 + orders (1 + n x (id 1 [+ items (1 + 10 x quantity 1)]))
    expect(await cost({ id: aliceId, n: 3, all: false })).toBe(1 + 1 + 3);
    expect(await cost({ id: bob, n: 3, all: false })).toBe(1 + 1 + 3);
    expect(await cost({ id: bob, all: false })).toBe(1 + 1 + 30);
    expect(await cost({ id: aliceId, n: 3, all: true })).toBe(1 + 1 + 3 * (1 + 11));
    const { error } = await refused(supergraph, query, { variables: { id: bob, n: 500, all: true }, token: admin });
    expect(error.extensions).toMatchObject({ code: 'COMPLEXITY_LIMIT_EXCEEDED', complexity: 1 + 1 + 500 * (1 + 11) });
  });

  it('reports the actual cost: the same weights over the lists that came back, each item paid once', async () => {
    // User.orders @listSize(slicingArguments: ["limit"]): estimated 1 + 1 + 50 x (id 1 + items (1 + 10 x quantity 1)),
    // actual 1 + 1 + each order returned x (id 1 + items 1 + each line x quantity 1).
    const { body } = await graphql(supergraph.url, 'query ($id: ID!) { user(id: $id) { orders(limit: 50) { id items { quantity } } } }', {
      variables: { id: toGlobalId('User', 'user-0001') },
      token: admin,
      headers: { 'x-ordergraph-tracing': '1' },
    });
    const orders = body.data!['user'].orders as { items: unknown[] }[];
    expect(orders.length).toBeLessThan(50);
    const actual = 1 + 1 + orders.reduce((sum, order) => sum + 1 + 1 + order.items.length, 0);
    expect(body.extensions?.['cost']).toEqual({ estimated: 1 + 1 + 50 * (1 + (1 + 10 * 1)), max: 5000, actual });
  });

  it('refuses an operation the directives price over the limit before any subgraph is called', async () => {
    const query = `{ usersConnection(first: 100) { edges { node { orders(limit: 100) { items { product { name } } } } } } }`;
    const { status, error } = await refused(supergraph, query, { token: admin });
    expect(status).toBe(400);
    // 1 + 100 x (edges 1 + node (1 + orders (1 + 100 x items (1 + 10 x product (1 + name 1)))))
    expect(error.extensions).toEqual({ code: 'COMPLEXITY_LIMIT_EXCEEDED', maxComplexity: 5000, complexity: 1 + 100 * (1 + (1 + (1 + 100 * (1 + 10 * (1 + 1))))) });
  });
});

describe('aliases, tokens and directives', () => {
  it('refuses more than 30 aliases', async () => {
    const aliases = (count: number) => `{ ${Array.from({ length: count }, (_, i) => `p${i}: products(limit: 1) { id }`).join(' ')} }`;
    expect((await graphql(supergraph.url, aliases(30))).body.errors).toBeUndefined();
    const { status, error } = await refused(supergraph, aliases(31));
    expect(status).toBe(400);
    expect(error.extensions).toEqual({ code: 'ALIAS_LIMIT_EXCEEDED', maxAliases: 30 });
    expect(error.message).toMatch(/Aliases limit of 30 exceeded, found 31/);
  });

  it('counts aliases of __typename too', async () => {
    const { status, error } = await refused(supergraph, `{ ${Array.from({ length: 101 }, (_, i) => `t${i}: __typename`).join(' ')} }`);
    expect(status).toBe(400);
    expect(error.extensions).toEqual({ code: 'ALIAS_LIMIT_EXCEEDED', maxAliases: 30 });
  });

  it('refuses more than 30 fields repeated as written, and not the repeats that merging fragments makes', async () => {
    const repeated = (count: number) => `{ ${'__typename '.repeat(count + 1)} }`;
    expect((await graphql(supergraph.url, repeated(30))).body.errors).toBeUndefined();
    const { status, error } = await refused(supergraph, repeated(500));
    expect(status).toBe(400);
    expect(error.extensions).toEqual({ code: 'DUPLICATE_FIELD_LIMIT_EXCEEDED', maxDuplicateFields: 30, duplicates: 500 });
    const fragments = Array.from({ length: 40 }, (_, i) => `fragment F${i} on Product { id name }`).join(' ');
    const spreads = Array.from({ length: 40 }, (_, i) => `...F${i}`).join(' ');
    expect((await graphql(supergraph.url, `{ products(limit: 1) { ${spreads} } } ${fragments}`)).body.errors).toBeUndefined();
  });

  it('refuses a document of more than 5000 tokens while parsing it', async () => {
    // `{ __typename(n: [1 1 ... 1]) }`: 9 tokens around the list's items.
    const tokens = (count: number) => `{ __typename(n: [${' 1'.repeat(count - 9)}]) }`;
    const { status, error } = await refused(supergraph, tokens(5001));
    expect(status).toBe(400);
    expect(error.extensions).toEqual({ code: 'TOKEN_LIMIT_EXCEEDED', maxTokens: 5000 });
    expect(error.message).toMatch(/5000 tokens/);
    // At 5000 tokens it parses, and fails validation instead (the argument does not exist).
    expect((await graphql(supergraph.url, tokens(5000))).body.errors![0]!.extensions?.['code']).toBe('GRAPHQL_VALIDATION_FAILED');
  });

  it('refuses more than 10 directives on one field, alone, before graphql-js validates the document', async () => {
    const directives = (count: number) => `query ($yes: Boolean!) { products(limit: 1) ${'@include(if: $yes) '.repeat(count)}{ id } }`;
    const { status, error } = await refused(supergraph, directives(11), { variables: { yes: true } });
    expect(status).toBe(400);
    expect(error.extensions).toEqual({ code: 'DIRECTIVE_LIMIT_EXCEEDED', maxDirectives: 10, directives: 11 });
    const ten = await graphql(supergraph.url, directives(10), { variables: { yes: true } });
    expect(ten.body.errors!.some((error) => error.extensions?.['maxDirectives'] !== undefined)).toBe(false);
  });

  it('answers one mistake repeated on a field with one error at each place (graphql-cop: directive overloading)', async () => {
    const response = await graphql(supergraph.url, `query cop { __typename ${'@aa'.repeat(10)} }`);
    expect(response.status).toBe(400);
    expect(response.body.errors).toHaveLength(1);
    expect(response.body.errors![0]).toMatchObject({ message: 'Unknown directive "@aa".', extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } });
    expect(response.body.errors![0]!.locations).toHaveLength(10);
  });
});
