// Authentication and authorization through the composed supergraph over real HTTP: every kind of bad token is refused
// with 401 before anything runs, no token runs as anonymous, and the authorization rules hold for every cross-user
// attempt. Production tokens come from a stand-in identity provider (testkit), the one boundary we do not own: its keys
// are real and its JWKS is served over local HTTP.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignJWT, UnsecuredJWT, type JWTPayload } from 'jose';
import { DEV_JWT_SECRET, toGlobalId } from '@ordergraph/core';
import { graphql, startIdentityProvider, token, type GraphQLResponse, type IdentityProvider } from '@ordergraph/testkit';
import { startSupergraph, type Supergraph } from '@ordergraph/testkit/e2e';

const adminId = toGlobalId('User', 'user-0000');
const aliceId = toGlobalId('User', 'user-0001');
const bobId = toGlobalId('User', 'user-0002');
const productId = (n: number) => toGlobalId('Product', `product-${String(n).padStart(4, '0')}`);
const codes = (body: GraphQLResponse['body']) => body.errors?.map((error) => error.extensions?.['code']);

/** A refusal before execution: 401, a bearer challenge, UNAUTHENTICATED and no data at all. */
function expectUnauthenticated({ status, headers, body }: GraphQLResponse, message: RegExp) {
  expect(status).toBe(401);
  expect(headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token"/);
  expect(body).not.toHaveProperty('data');
  expect(body.errors).toEqual([{ message: expect.stringMatching(message), extensions: { code: 'UNAUTHENTICATED' } }]);
}

/** An HS256 token with exactly these claims, signed with the development secret. */
const devSigned = (claims: JWTPayload) =>
  new SignJWT(claims).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).setExpirationTime('1h').sign(new TextEncoder().encode(DEV_JWT_SECRET));

/** The same token with its payload swapped and the original signature kept. */
function withPayload(jwt: string, claims: JWTPayload): string {
  const [header, , signature] = jwt.split('.');
  return `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${signature}`;
}

const ME = `query ($id: ID!) { user(id: $id) { id name } }`;

describe('development tokens (HS256 with JWT_SECRET)', () => {
  let supergraph: Supergraph;
  let alice: string;
  beforeAll(async () => {
    supergraph = await startSupergraph();
    alice = await token('USER', 'user-0001');
  });
  afterAll(() => supergraph?.stop());

  const storeCalls = async () => (await Promise.all((['users', 'orders', 'catalog'] as const).map((name) => supergraph.storeCalls(name)))).join();

  it('a valid token reads as its user', async () => {
    const { status, body } = await graphql(supergraph.url, ME, { variables: { id: aliceId }, token: alice });
    expect(status).toBe(200);
    expect(body.data!.user.id).toBe(aliceId);
  });

  it('no token runs as anonymous: the catalog answers, the rest is UNAUTHENTICATED', async () => {
    const { status, body } = await graphql(supergraph.url, `query ($id: ID!, $p: ID!) { user(id: $id) { id } product(id: $p) { id } }`, {
      variables: { id: aliceId, p: productId(1) },
    });
    expect(status).toBe(200);
    expect(body.data).toEqual({ user: null, product: { id: productId(1) } });
    expect(body.errors).toEqual([expect.objectContaining({ path: ['user'], extensions: { code: 'UNAUTHENTICATED' } })]);
  });

  const badTokens: [string, () => Promise<string>, RegExp][] = [
    ['expired', () => token('USER', 'user-0001', { expiresIn: Math.floor(Date.now() / 1000) - 60 }), /^Token expired$/],
    ['malformed', async () => 'not.a-jwt', /^Invalid token$/],
    ['signed with another secret', () => token('USER', 'user-0001', { secret: 'another-secret-of-at-least-32-characters' }), /^Invalid token$/],
    ['tampered with (ADMIN role under a USER signature)', async () => withPayload(alice, { sub: aliceId, role: 'ADMIN', exp: 4e9 }), /^Invalid token$/],
    ['unsigned (alg: none)', () => Promise.resolve(new UnsecuredJWT({ role: 'ADMIN' }).setSubject(adminId).setExpirationTime('1h').encode()), /^Invalid token$/],
    ['without a role', () => devSigned({ sub: aliceId }), /role/],
    ['of an unknown role', () => devSigned({ sub: aliceId, role: 'ROOT' }), /role/],
    ['for a subject that is not a user', () => devSigned({ sub: productId(1), role: 'ADMIN' }), /subject/],
    ['without an expiry', () => new SignJWT({ sub: aliceId, role: 'USER' }).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode(DEV_JWT_SECRET)), /^Invalid token$/],
  ];

  it.each(badTokens)('refuses a token that is %s with 401, before any subgraph is called', async (_kind, make, message) => {
    const before = await storeCalls();
    expectUnauthenticated(await graphql(supergraph.url, ME, { variables: { id: aliceId }, token: await make() }), message);
    expect(await storeCalls()).toBe(before);
  });

  it.each([
    ['a scheme other than Bearer', 'Basic dXNlcjpwYXNz'],
    ['Bearer without a token', 'Bearer'],
  ])('refuses an Authorization header with %s', async (_kind, authorization) => {
    expectUnauthenticated(await graphql(supergraph.url, ME, { variables: { id: aliceId }, headers: { authorization } }), /Bearer <token>/);
  });

  it('a subgraph called directly verifies the token itself', async () => {
    const forged = withPayload(alice, { sub: aliceId, role: 'ADMIN', exp: 4e9 });
    const { status, body } = await graphql(supergraph.subgraphUrl('users'), `{ users { id } }`, { token: forged });
    expect(status).toBe(401);
    expect(codes(body)).toEqual(['UNAUTHENTICATED']);
  });
});

describe('production tokens (RS256/ES256 through JWT_JWKS_URL)', () => {
  let idp: IdentityProvider;
  let supergraph: Supergraph;
  beforeAll(async () => {
    idp = await startIdentityProvider();
    supergraph = await startSupergraph({
      env: { NODE_ENV: 'production', JWT_JWKS_URL: idp.jwksUrl, JWT_ISSUER: idp.issuer, JWT_AUDIENCE: idp.audience },
    });
  });
  afterAll(async () => {
    await supergraph?.stop();
    await idp?.close();
  });

  it.each(['RS256', 'ES256'] as const)('accepts an %s token from the identity provider, at the gateway and in the subgraphs', async (alg) => {
    const jwt = await idp.sign({ sub: aliceId, role: 'USER' }, { alg });
    const { status, body } = await graphql(supergraph.url, `query ($id: ID!) { user(id: $id) { id email orders(limit: 1) { id } } }`, {
      variables: { id: aliceId },
      token: jwt,
    });
    expect(status).toBe(200);
    expect(body.errors).toBeUndefined();
    expect(body.data!.user).toMatchObject({ id: aliceId, email: 'user1@example.com' });
  });

  const badTokens: [string, () => Promise<string>, RegExp][] = [
    ['expired', () => idp.sign({ sub: aliceId, role: 'USER' }, { expiresAt: Math.floor(Date.now() / 1000) - 60 }), /^Token expired$/],
    ['from another issuer', () => idp.sign({ sub: aliceId, role: 'USER' }, { issuer: 'https://evil.example/' }), /^Invalid token$/],
    ['for another audience', () => idp.sign({ sub: aliceId, role: 'USER' }, { audience: 'someone-else' }), /^Invalid token$/],
    ['signed with a key the JWKS does not list', () => idp.sign({ sub: aliceId, role: 'USER' }, { unknownKey: true }), /^Invalid token$/],
    ['HS256 with the development secret', () => token('ADMIN', 'user-0001'), /^Invalid token$/],
    [
      'HS256 signed with the RS256 public key (algorithm confusion)',
      () =>
        new SignJWT({ sub: aliceId, role: 'ADMIN' })
          .setProtectedHeader({ alg: 'HS256', kid: 'RS256' })
          .setIssuer(idp.issuer)
          .setAudience(idp.audience)
          .setExpirationTime('1h')
          .sign(new TextEncoder().encode(idp.publicKeyPem)),
      /^Invalid token$/,
    ],
    ['unsigned (alg: none)', async () => new UnsecuredJWT({ role: 'ADMIN' }).setSubject(aliceId).setIssuer(idp.issuer).setAudience(idp.audience).setExpirationTime('1h').encode(), /^Invalid token$/],
  ];

  it.each(badTokens)('refuses a token that is %s with 401', async (_kind, make, message) => {
    expectUnauthenticated(await graphql(supergraph.url, ME, { variables: { id: aliceId }, token: await make() }), message);
  });

  it('an identity provider that cannot be reached is an internal failure: 500 with a masked body, not a 401', async () => {
    const unreachable = await startIdentityProvider();
    await unreachable.close();
    const isolated = await startSupergraph({ env: { NODE_ENV: 'production', JWT_JWKS_URL: unreachable.jwksUrl } });
    try {
      const { status, headers, body } = await graphql(isolated.url, ME, { variables: { id: aliceId }, token: await unreachable.sign({ sub: aliceId, role: 'USER' }) });
      expect(status).toBe(500);
      expect(headers.get('content-type')).toMatch(/^application\/json/);
      expect(body).toEqual({ errors: [{ message: 'Internal server error', extensions: { code: 'INTERNAL_SERVER_ERROR' } }] });
    } finally {
      await isolated.stop();
    }
  });
});

describe('authorization in the subgraphs', () => {
  let supergraph: Supergraph;
  let admin: string;
  let alice: string;
  let bob: string;
  let aliceOrder: string;
  beforeAll(async () => {
    supergraph = await startSupergraph();
    [admin, alice, bob] = await Promise.all([token('ADMIN', 'user-0000'), token('USER', 'user-0001'), token('USER', 'user-0002')]);
    const created = await api(`mutation ($p: ID!) { createOrder(input: { items: [{ productId: $p, quantity: 1 }] }) { id } }`, { variables: { p: productId(1) }, token: alice });
    aliceOrder = created.body.data!.createOrder.id;
  });
  afterAll(() => supergraph?.stop());

  const api = (query: string, options: { variables?: Record<string, unknown>; token?: string } = {}) => graphql(supergraph.url, query, options);
  const tokenOf = (who: 'anonymous' | 'alice' | 'bob' | 'admin') => ({ anonymous: undefined, alice, bob, admin })[who];

  it.each([
    ['read', `query ($id: ID!) { order(id: $id) { id status total } }`, 'order'],
    ['read through node(id)', `query ($id: ID!) { node(id: $id) { id ... on Order { status } } }`, 'node'],
    ['update', `mutation ($id: ID!) { updateOrder(id: $id, input: { status: CANCELLED }) { id status } }`, 'updateOrder'],
    ['change the items of', `mutation ($id: ID!, $p: ID!) { updateOrder(id: $id, input: { items: [{ productId: $p, quantity: 9 }] }) { id } }`, 'updateOrder'],
    ['cancel', `mutation ($id: ID!) { cancelOrder(id: $id) { id status } }`, 'cancelOrder'],
  ])("another user cannot %s an order by its ID (NOT_FOUND, as for a missing one), anonymous is UNAUTHENTICATED", async (_action, query, field) => {
    const variables = { id: aliceOrder, p: productId(2) };
    const asBob = await api(query, { variables, token: bob });
    expect(asBob.body.data?.[field] ?? null).toBeNull();
    expect(asBob.body.errors).toEqual([expect.objectContaining({ message: `Order with id ${aliceOrder} not found`, extensions: { code: 'NOT_FOUND', resource: 'Order', id: aliceOrder } })]);
    expect(asBob.body.errors![0]!.path![0]).toBe(field);
    const anonymous = await api(query, { variables });
    expect(codes(anonymous.body)).toEqual(['UNAUTHENTICATED']);
    // Nothing changed: the owner still sees the order as it was.
    const mine = await api(`query ($id: ID!) { order(id: $id) { status items { quantity } } }`, { variables, token: alice });
    expect(mine.body.data!.order).toEqual({ status: 'PENDING', items: [{ quantity: 1 }] });
  });

  it('the union form answers another user with OrderNotFound, and the owner beyond their rights with InsufficientPermissions', async () => {
    const UPDATE = `mutation ($id: ID!, $s: OrderStatus!) { updateOrderResult(id: $id, input: { status: $s }) { __typename ... on OrderNotFound { orderId } ... on InsufficientPermissions { message requiredRole } } }`;
    const asBob = await api(UPDATE, { variables: { id: aliceOrder, s: 'CANCELLED' }, token: bob });
    expect(asBob.body.data!.updateOrderResult).toEqual({ __typename: 'OrderNotFound', orderId: aliceOrder });
    const asAlice = await api(UPDATE, { variables: { id: aliceOrder, s: 'PROCESSING' }, token: alice });
    expect(asAlice.body.data!.updateOrderResult).toEqual({ __typename: 'InsufficientPermissions', message: 'Not authorized', requiredRole: 'ADMIN' });
  });

  it('another user cannot find an order by searching for its ID, nor anonymous', async () => {
    const SEARCH = `query ($q: String!) { search(query: $q) { __typename ... on Order { id } } }`;
    expect((await api(SEARCH, { variables: { q: aliceOrder }, token: alice })).body.data!.search).toEqual([{ __typename: 'Order', id: aliceOrder }]);
    expect((await api(SEARCH, { variables: { q: aliceOrder }, token: bob })).body.data!.search).toEqual([]);
    expect((await api(SEARCH, { variables: { q: aliceOrder } })).body.data!.search).toEqual([]);
  });

  it('search as anonymous finds products only, even for a user email or name', async () => {
    const SEARCH = `query ($q: String!) { search(query: $q) { __typename } }`;
    for (const q of ['user1@example.com', 'Ada', 'lamp']) {
      const { body } = await api(SEARCH, { variables: { q } });
      expect(body.errors).toBeUndefined();
      expect(body.data!.search.every((hit: { __typename: string }) => hit.__typename === 'Product')).toBe(true);
    }
  });

  it.each([
    ['user(id) of another user', `query ($id: ID!) { user(id: $id) { id name } }`, 'user'],
    ['node(id) of another user', `query ($id: ID!) { node(id: $id) { id } }`, 'node'],
    ['the email of another user', `query ($id: ID!) { user(id: $id) { email } }`, 'user'],
    ['the orders of another user', `query ($id: ID!) { user(id: $id) { orders { id } } }`, 'user'],
  ])('a user cannot read %s: null and NOT_FOUND, as for a missing user', async (_what, query, field) => {
    const { body } = await api(query, { variables: { id: bobId }, token: alice });
    expect(body.data?.[field] ?? null).toBeNull();
    expect(codes(body)).toEqual(['NOT_FOUND']);
    const missing = await api(query, { variables: { id: toGlobalId('User', 'nobody') }, token: alice });
    expect(codes(missing.body)).toEqual(['NOT_FOUND']);
  });

  it('a user reads their own email and orders; ADMIN reads anyone', async () => {
    const QUERY = `query ($id: ID!) { user(id: $id) { email orders(limit: 1) { user { id } } } }`;
    const own = await api(QUERY, { variables: { id: aliceId }, token: alice });
    expect(own.body.data!.user).toEqual({ email: 'user1@example.com', orders: [{ user: { id: aliceId } }] });
    const asAdmin = await api(QUERY, { variables: { id: bobId }, token: admin });
    expect(asAdmin.body.data!.user).toEqual({ email: 'user2@example.com', orders: [{ user: { id: bobId } }] });
    const order = await api(`query ($id: ID!) { order(id: $id) { user { email } } }`, { variables: { id: aliceOrder }, token: admin });
    expect(order.body.data!.order.user.email).toBe('user1@example.com');
  });

  it.each([
    ['users', `{ users { id } }`],
    ['usersConnection', `{ usersConnection { totalCount } }`],
    ['createUser', `mutation { createUser(input: { email: "sneaky@example.com", name: "Sneaky", role: ADMIN }) { id } }`],
    ['createProduct', `mutation { createProduct(input: { name: "Sneaky", price: 1 }) { id } }`],
  ])('%s needs ADMIN: FORBIDDEN for a user, UNAUTHENTICATED for anonymous', async (_field, query) => {
    expect(codes((await api(query, { token: alice })).body)).toEqual(['FORBIDDEN']);
    expect(codes((await api(query)).body)).toEqual(['UNAUTHENTICATED']);
    expect(codes((await api(query, { token: admin })).body)).toBeUndefined();
  });

  it.each([
    // [from status reached by ADMIN, move, who, expected]
    ['PENDING', 'PROCESSING', 'alice', 'FORBIDDEN'],
    ['PENDING', 'CANCELLED', 'alice', null],
    ['PROCESSING', 'CANCELLED', 'alice', 'FORBIDDEN'],
    ['PROCESSING', 'SHIPPED', 'alice', 'FORBIDDEN'],
    ['PROCESSING', 'CANCELLED', 'admin', null],
    ['SHIPPED', 'DELIVERED', 'admin', null],
    // A move in no role's list is invalid for the owner too; FORBIDDEN would send them to an ADMIN who cannot make it.
    ['PENDING', 'SHIPPED', 'alice', 'INVALID_TRANSITION'],
    ['PENDING', 'SHIPPED', 'admin', 'INVALID_TRANSITION'],
    ['PENDING', 'DELIVERED', 'alice', 'INVALID_TRANSITION'],
    ['PENDING', 'CANCELLED', 'bob', 'NOT_FOUND'],
  ] as const)('an order in %s moved to %s by %s: %s', async (from, to, who, expected) => {
    const created = await api(`mutation ($p: ID!) { createOrder(input: { items: [{ productId: $p, quantity: 1 }] }) { id } }`, { variables: { p: productId(3) }, token: alice });
    const id = created.body.data!.createOrder.id as string;
    const path = { PENDING: [], PROCESSING: ['PROCESSING'], SHIPPED: ['PROCESSING', 'SHIPPED'] }[from];
    for (const status of path) await api(`mutation ($id: ID!, $s: OrderStatus!) { updateOrder(id: $id, input: { status: $s }) { id } }`, { variables: { id, s: status }, token: admin });
    const { body } = await api(`mutation ($id: ID!, $s: OrderStatus!) { updateOrder(id: $id, input: { status: $s }) { status } }`, { variables: { id, s: to }, token: tokenOf(who) });
    if (expected === null) expect(body.data!.updateOrder).toEqual({ status: to });
    else expect(codes(body)).toEqual([expected]);
  });
});
