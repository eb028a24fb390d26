// Introspection modes (INTROSPECTION=public|admin|off) through the composed supergraph over real HTTP: `admin`, the
// production default, answers a non-admin's introspection with FORBIDDEN and no schema data, and gives administrators
// the full schema with deprecation details.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildClientSchema,
  getIntrospectionQuery,
  parse,
  printSchema,
  validate,
  type IntrospectionEnumType,
  type IntrospectionObjectType,
  type IntrospectionQuery,
} from 'graphql';
import { graphql, token, type GraphQLResponse } from '@ordergraph/testkit';
import { startSupergraph, type Supergraph } from '@ordergraph/testkit/e2e';

const SECRET = 'introspection-test-secret-of-32-characters';
const FULL = getIntrospectionQuery({ descriptions: true, inputValueDeprecation: true, specifiedByUrl: true, directiveIsRepeatable: true });
const codes = (body: GraphQLResponse['body']) => body.errors?.map((error) => error.extensions?.['code']);

let tokens: { admin: string; user: string };
beforeAll(async () => {
  tokens = { admin: await token('ADMIN', 'user-0000', { secret: SECRET }), user: await token('USER', 'user-0001', { secret: SECRET }) };
});

/** Boots a supergraph for one describe block. */
function supergraphWith(env: Record<string, string>) {
  const handle: { current?: Supergraph } = {};
  beforeAll(async () => {
    handle.current = await startSupergraph({ env: { JWT_SECRET: SECRET, ...env } });
  });
  afterAll(() => handle.current?.stop());
  return (query: string, as?: 'admin' | 'user', headers: Record<string, string> = {}) =>
    graphql(handle.current!.url, query, { ...(as ? { token: tokens[as] } : {}), headers });
}

function expectRefused({ status, body }: GraphQLResponse, message: string) {
  expect(status).toBe(403); // the test client prefers application/graphql-response+json
  expect(body).not.toHaveProperty('data');
  expect(body.errors?.length).toBeGreaterThan(0);
  for (const error of body.errors!) expect(error).toMatchObject({ message, extensions: { code: 'FORBIDDEN' } });
}

describe('admin (the default when NODE_ENV=production)', () => {
  const api = supergraphWith({ NODE_ENV: 'production' });
  const REFUSED = 'Introspection is restricted to administrators';

  it('gives an administrator the full schema, deprecation details included', async () => {
    const { status, body } = await api(FULL, 'admin');
    expect(status).toBe(200);
    expect(body.errors).toBeUndefined();
    const introspection = body.data as IntrospectionQuery;
    const schema = buildClientSchema(introspection);
    expect(Object.keys(schema.getQueryType()!.getFields()).sort()).toEqual(['node', 'order', 'product', 'products', 'search', 'user', 'users', 'usersConnection']);
    expect(Object.keys(schema.getMutationType()!.getFields()).sort()).toEqual(
      ['cancelOrder', 'createOrder', 'createProduct', 'createUser', 'updateOrder', 'updateOrderResult', 'updateProduct'],
    );
    expect(printSchema(schema)).toContain('type Order implements Node');
    expect(schema.getDirective('deprecated')).toBeDefined();
    // Internal fields of the subgraphs (@inaccessible) and federation's own stay hidden.
    expect(printSchema(schema)).not.toMatch(/_searchOrders|_searchProducts|_entities|_service|SearchHit/);
    // includeDeprecated is honoured and every field and enum value reports isDeprecated/deprecationReason.
    const userType = introspection.__schema.types.find((type) => type.name === 'User') as IntrospectionObjectType;
    for (const field of userType.fields) expect(field).toMatchObject({ isDeprecated: expect.any(Boolean), deprecationReason: null });
    const orderStatus = introspection.__schema.types.find((type) => type.name === 'OrderStatus') as IntrospectionEnumType;
    expect(orderStatus.enumValues.map((value) => value.name)).toEqual(['PENDING', 'PROCESSING', 'SHIPPED', 'DELIVERED', 'CANCELLED']);
  });

  it.each([
    ['anonymous', undefined],
    ['a USER', 'user'],
  ] as const)('refuses %s with FORBIDDEN and no schema data, even right after an administrator asked the same', async (_who, as) => {
    await api(FULL, 'admin'); // validation results are cached per document: the admin's must not leak
    expectRefused(await api(FULL, as), REFUSED);
    expectRefused(await api(`{ __type(name: "User") { fields(includeDeprecated: true) { name isDeprecated deprecationReason } } }`, as), REFUSED);
  });

  it('finds introspection behind aliases and fragments; a client accepting only application/json gets 200', async () => {
    expectRefused(await api(`{ s: __schema { queryType { name } } }`), REFUSED);
    expectRefused(await api(`query { ...F } fragment F on Query { __schema { types { name } } }`, 'user'), REFUSED);
    const legacy = await api(`{ __schema { queryType { name } } }`, 'user', { accept: 'application/json' });
    expect(legacy.status).toBe(200);
    expect(legacy.body).not.toHaveProperty('data');
    expect(codes(legacy.body)).toEqual(['FORBIDDEN']);
  });

  it('leaves __typename and ordinary queries alone', async () => {
    const { body } = await api(`{ __typename products(limit: 1) { __typename id } }`);
    expect(body.errors).toBeUndefined();
    expect(body.data!['__typename']).toBe('Query');
  });
});

describe('public (the default outside production)', () => {
  const api = supergraphWith({});

  it('answers anyone', async () => {
    const { body } = await api(FULL);
    expect(body.errors).toBeUndefined();
    expect(buildClientSchema(body.data as IntrospectionQuery).getType('Product')).toBeDefined();
  });
});

describe('INTROSPECTION=admin outside production', () => {
  const api = supergraphWith({ INTROSPECTION: 'admin' });

  it('applies the same rule', async () => {
    expectRefused(await api(`{ __schema { queryType { name } } }`, 'user'), 'Introspection is restricted to administrators');
    expect((await api(`{ __schema { queryType { name } } }`, 'admin')).body.data).toEqual({ __schema: { queryType: { name: 'Query' } } });
  });
});

describe('off', () => {
  const api = supergraphWith({ NODE_ENV: 'production', INTROSPECTION: 'off' });

  it('refuses administrators too', async () => {
    expectRefused(await api(FULL, 'admin'), 'Introspection is disabled');
    expect((await api(`{ __typename }`, 'admin')).body.data).toEqual({ __typename: 'Query' });
  });
});

describe.each(['rust', 'js'])('what introspection shows (QUERY_PLANNER=%s)', (planner) => {
  let supergraph: Supergraph;
  beforeAll(async () => {
    supergraph = await startSupergraph({ env: { JWT_SECRET: SECRET }, gatewayEnv: { QUERY_PLANNER: planner } });
  });
  afterAll(() => supergraph?.stop());

  it("is the API schema: without federation's directives and their types, with the @defer and @stream the gateway serves", async () => {
    const { body } = await graphql(supergraph.url, FULL);
    expect(body.errors).toBeUndefined();
    const introspection = body.data as IntrospectionQuery;
    // requiresScopes__Scope (the scalar of @requiresScopes' argument) and every other spec-prefixed type stay hidden.
    expect(introspection.__schema.types.map((type) => type.name).filter((name) => !name.startsWith('__') && name.includes('__'))).toEqual([]);
    const directives = introspection.__schema.directives.map((directive) => directive.name);
    for (const hidden of ['authenticated', 'requiresScopes', 'policy', 'cost', 'listSize', 'inaccessible', 'link']) expect(directives).not.toContain(hidden);
    expect(directives).toEqual(expect.arrayContaining(['include', 'skip', 'deprecated', 'cacheControl', 'defer', 'stream']));
    // A client validating its documents against what introspection says (codegen, GraphiQL) accepts them.
    const schema = buildClientSchema(introspection);
    expect(validate(schema, parse('query ($id: ID!) { order(id: $id) { id ... @defer { total } items @stream(initialCount: 1) { quantity } } }'))).toEqual([]);
    // Queries that read data as well are not affected.
    const mixed = await graphql(supergraph.url, '{ __typename products(limit: 1) { id } }');
    expect(mixed.body.data).toEqual({ __typename: 'Query', products: [{ id: expect.any(String) }] });
  });
});
