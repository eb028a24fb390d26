// The composed supergraph end to end: every root field, every cross-subgraph field, the order state machine, the
// concurrency rule, null propagation and the error shapes, over real HTTP through the gateway.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toGlobalId } from '@ordergraph/core';
import { UPDATE_ORDER_RESULT, graphql, token } from '@ordergraph/testkit';
import { startSupergraph, type Supergraph } from '@ordergraph/testkit/e2e';

let supergraph: Supergraph;
let admin: string;
let alice: string;
let bob: string;
const aliceId = toGlobalId('User', 'user-0001');
const productId = (n: number) => toGlobalId('Product', `product-${String(n).padStart(4, '0')}`);

beforeAll(async () => {
  supergraph = await startSupergraph();
  [admin, alice, bob] = await Promise.all([token('ADMIN', 'user-0000'), token('USER', 'user-0001'), token('USER', 'user-0002')]);
});
afterAll(() => supergraph?.stop());

const api = (query: string, options: { variables?: Record<string, unknown>; token?: string } = {}) => graphql(supergraph.url, query, options);
const codes = (body: { errors?: { extensions?: Record<string, unknown> }[] }) => body.errors?.map((error) => error.extensions?.['code']);

const CREATE_ORDER = `mutation ($input: CreateOrderInput!) {
  createOrder(input: $input) { id status total items { quantity unitPrice subtotal product { id name currentPrice } } user { id name } }
}`;
async function createOrder(as: string, items: { productId: string; quantity: number }[]) {
  const { body } = await api(CREATE_ORDER, { variables: { input: { items } }, token: as });
  expect(body.errors).toBeUndefined();
  return body.data!.createOrder as { id: string; status: string; total: number; items: { quantity: number; unitPrice: number; subtotal: number; product: { id: string; name: string; currentPrice: number } }[]; user: { id: string; name: string } };
}

describe('queries', () => {
  it('user with the orders the orders subgraph contributes, and each order back to its user', async () => {
    const { body } = await api(
      `query ($id: ID!) { user(id: $id) { id name email orders(limit: 5) { id status total user { id name } items { quantity product { id name } } } } }`,
      { variables: { id: aliceId }, token: alice },
    );
    expect(body.errors).toBeUndefined();
    const user = body.data!.user;
    expect(user).toMatchObject({ id: aliceId, email: 'user1@example.com' });
    expect(user.orders.length).toBeGreaterThan(0);
    for (const order of user.orders) {
      expect(order.user).toEqual({ id: aliceId, name: user.name });
      expect(order.items.length).toBeGreaterThan(0);
      for (const item of order.items) expect(item.product.name).toEqual(expect.any(String));
    }
  });

  it('users and usersConnection for an admin', async () => {
    const { body } = await api(
      `{ users(limit: 3, offset: 1) { id email } usersConnection(first: 2) { totalCount edges { cursor node { id } } pageInfo { hasNextPage hasPreviousPage endCursor } } }`,
      { token: admin },
    );
    expect(body.errors).toBeUndefined();
    expect(body.data!.users.map((u: { email: string }) => u.email)).toEqual(['user1@example.com', 'user2@example.com', 'user3@example.com']);
    expect(body.data!.usersConnection.edges).toHaveLength(2);
    expect(body.data!.usersConnection.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
    expect(body.data!.usersConnection.totalCount).toBeGreaterThanOrEqual(100);
  });

  it('order and product', async () => {
    const order = await createOrder(alice, [{ productId: productId(1), quantity: 2 }]);
    const { body } = await api(`query ($o: ID!, $p: ID!) { order(id: $o) { id status user { id } } product(id: $p) { id name price currentPrice createdAt } }`, {
      variables: { o: order.id, p: productId(1) },
      token: alice,
    });
    expect(body.errors).toBeUndefined();
    expect(body.data!.order).toEqual({ id: order.id, status: 'PENDING', user: { id: aliceId } });
    expect(body.data!.product).toMatchObject({ id: productId(1), createdAt: expect.stringMatching(/Z$/) });
  });

  it('product is public; orders and users are not', async () => {
    const { body } = await api(`query ($p: ID!, $u: ID!) { product(id: $p) { name } user(id: $u) { name } }`, { variables: { p: productId(2), u: aliceId } });
    expect(body.data!.product.name).toEqual(expect.any(String));
    expect(body.data!.user).toBeNull();
    expect(codes(body)).toEqual(['UNAUTHENTICATED']);
  });

  describe('node(id)', () => {
    const NODE = `query ($id: ID!) { node(id: $id) { __typename id ... on User { userName: name } ... on Order { status total user { id } } ... on Product { name price } } }`;

    it('resolves each type in the subgraph that owns it', async () => {
      const order = await createOrder(alice, [{ productId: productId(3), quantity: 1 }]);
      const user = await api(NODE, { variables: { id: aliceId }, token: alice });
      expect(user.body.data!.node).toMatchObject({ __typename: 'User', id: aliceId });
      const ord = await api(NODE, { variables: { id: order.id }, token: alice });
      expect(ord.body.errors).toBeUndefined();
      expect(ord.body.data!.node).toEqual({ __typename: 'Order', id: order.id, status: 'PENDING', total: order.total, user: { id: aliceId } });
      const product = await api(NODE, { variables: { id: productId(3) } });
      expect(product.body.data!.node).toMatchObject({ __typename: 'Product', id: productId(3), name: expect.any(String) });
    });

    it.each([
      ['a malformed ID', 'garbage!'],
      ['an unknown user', toGlobalId('User', 'nobody')],
      ['an unknown order', toGlobalId('Order', 'nothing')],
      ['an unknown product', toGlobalId('Product', 'nothing')],
      ['an unknown type', toGlobalId('Invoice', '1')],
    ])('answers %s with null and NOT_FOUND, without crashing', async (_case, id) => {
      const { status, body } = await api(NODE, { variables: { id }, token: admin });
      expect(status).toBe(200);
      expect(body.data?.node ?? null).toBeNull();
      expect(codes(body)).toContain('NOT_FOUND');
    });
  });

  describe('search(query)', () => {
    const SEARCH = `query ($q: String!) { search(query: $q) { __typename ... on User { id email } ... on Order { id status } ... on Product { id name } } }`;

    it('finds products for anyone, best match first, at most 20', async () => {
      const { body } = await api(SEARCH, { variables: { q: 'lamp' } });
      expect(body.errors).toBeUndefined();
      const results = body.data!.search as { __typename: string; name: string }[];
      expect(results.length).toBeGreaterThan(0);
      expect(results.length).toBeLessThanOrEqual(20);
      expect(results.every((result) => result.__typename === 'Product' && /lamp/i.test(result.name))).toBe(true);
    });

    it('finds users only for administrators', async () => {
      const asAdmin = await api(SEARCH, { variables: { q: 'user42@' }, token: admin });
      expect(asAdmin.body.data!.search).toContainEqual({ __typename: 'User', id: toGlobalId('User', 'user-0042'), email: 'user42@example.com' });
      const asUser = await api(SEARCH, { variables: { q: 'user42@' }, token: alice });
      expect(asUser.body.data!.search.filter((r: { __typename: string }) => r.__typename === 'User')).toEqual([]);
    });

    it('finds an order by ID for its owner and administrators only', async () => {
      const order = await createOrder(alice, [{ productId: productId(4), quantity: 1 }]);
      expect((await api(SEARCH, { variables: { q: order.id }, token: alice })).body.data!.search).toEqual([{ __typename: 'Order', id: order.id, status: 'PENDING' }]);
      expect((await api(SEARCH, { variables: { q: order.id }, token: admin })).body.data!.search).toEqual([{ __typename: 'Order', id: order.id, status: 'PENDING' }]);
      expect((await api(SEARCH, { variables: { q: order.id }, token: bob })).body.data!.search).toEqual([]);
    });
  });
});

describe('mutations', () => {
  it('createUser (ADMIN), then the new user is readable', async () => {
    const { body } = await api(`mutation { createUser(input: { email: "e2e@example.com", name: "E2E" }) { id email role } }`, { token: admin });
    expect(body.data!.createUser).toMatchObject({ email: 'e2e@example.com', role: 'USER' });
    const again = await api(`mutation { createUser(input: { email: "E2E@example.com", name: "Again" }) { id } }`, { token: admin });
    expect(codes(again.body)).toEqual(['EMAIL_TAKEN']);
  });

  it('createOrder takes prices from the catalog and computes the total on the server', async () => {
    const products = await api(`query ($a: ID!, $b: ID!) { a: product(id: $a) { currentPrice } b: product(id: $b) { currentPrice } }`, {
      variables: { a: productId(10), b: productId(11) },
    });
    const { a, b } = products.body.data as { a: { currentPrice: number }; b: { currentPrice: number } };
    const order = await createOrder(alice, [
      { productId: productId(10), quantity: 3 },
      { productId: productId(11), quantity: 1 },
    ]);
    expect(order.status).toBe('PENDING');
    expect(order.user.id).toBe(aliceId);
    expect(order.items.map((item) => item.unitPrice)).toEqual([a.currentPrice, b.currentPrice]);
    expect(order.total).toBeCloseTo(3 * a.currentPrice + b.currentPrice, 2);
  });

  it('an order keeps the price it was placed at when the catalog price changes', async () => {
    const created = await api(`mutation { createProduct(input: { name: "Price Watch", price: 10.5 }) { id price currentPrice } }`, { token: admin });
    const product = created.body.data!.createProduct as { id: string };
    const before = await createOrder(alice, [{ productId: product.id, quantity: 2 }]);
    const updated = await api(`mutation ($id: ID!) { updateProduct(id: $id, input: { price: 12.25 }) { currentPrice } }`, { variables: { id: product.id }, token: admin });
    expect(updated.body.data!.updateProduct.currentPrice).toBe(12.25);
    const after = await createOrder(alice, [{ productId: product.id, quantity: 2 }]);
    expect(before.total).toBe(21);
    expect(after.total).toBe(24.5);
    const reread = await api(`query ($id: ID!) { order(id: $id) { total items { unitPrice product { currentPrice } } } }`, { variables: { id: before.id }, token: alice });
    expect(reread.body.data!.order).toEqual({ total: 21, items: [{ unitPrice: 10.5, product: { currentPrice: 12.25 } }] });
  });

  it('createOrder refuses an unknown product and anonymous callers', async () => {
    const unknown = await api(CREATE_ORDER, { variables: { input: { items: [{ productId: toGlobalId('Product', 'ghost'), quantity: 1 }] } }, token: alice });
    expect(codes(unknown.body)).toEqual(['BAD_USER_INPUT']);
    const anonymous = await api(CREATE_ORDER, { variables: { input: { items: [{ productId: productId(1), quantity: 1 }] } } });
    expect(codes(anonymous.body)).toEqual(['UNAUTHENTICATED']);
  });

  it('createProduct and updateProduct are for administrators', async () => {
    const asUser = await api(`mutation { createProduct(input: { name: "Nope", price: 1 }) { id } }`, { token: alice });
    expect(codes(asUser.body)).toEqual(['FORBIDDEN']);
  });
});

describe('the order state machine', () => {
  const UPDATE = `mutation ($id: ID!, $input: UpdateOrderInput!) { updateOrder(id: $id, input: $input) { id status } }`;
  const move = (id: string, status: string, as: string) => api(UPDATE, { variables: { id, input: { status } }, token: as });

  it('walks PENDING -> PROCESSING -> SHIPPED -> DELIVERED as ADMIN; DELIVERED is terminal', async () => {
    const order = await createOrder(alice, [{ productId: productId(20), quantity: 1 }]);
    for (const status of ['PROCESSING', 'SHIPPED', 'DELIVERED']) {
      const { body } = await move(order.id, status, admin);
      expect(body.data?.updateOrder).toEqual({ id: order.id, status });
    }
    const { body } = await move(order.id, 'CANCELLED', admin);
    expect(body.errors?.[0]).toMatchObject({ path: ['updateOrder'], extensions: { code: 'INVALID_TRANSITION', from: 'DELIVERED', to: 'CANCELLED' } });
    const reread = await api(`query ($id: ID!) { order(id: $id) { status } }`, { variables: { id: order.id }, token: alice });
    expect(reread.body.data!.order.status).toBe('DELIVERED');
  });

  it('lets the owner cancel a PENDING order but not process it', async () => {
    const order = await createOrder(alice, [{ productId: productId(21), quantity: 1 }]);
    expect(codes((await move(order.id, 'PROCESSING', alice)).body)).toEqual(['FORBIDDEN']);
    const cancelled = await api(`mutation ($id: ID!) { cancelOrder(id: $id) { status } }`, { variables: { id: order.id }, token: alice });
    expect(cancelled.body.data!.cancelOrder.status).toBe('CANCELLED');
    expect(codes((await move(order.id, 'PENDING', admin)).body)).toEqual(['INVALID_TRANSITION']);
  });

  it("never lets another user read or change an order, and answers them as for a missing one", async () => {
    const order = await createOrder(alice, [{ productId: productId(22), quantity: 1 }]);
    const missing = toGlobalId('Order', 'missing');
    for (const query of [
      `query ($id: ID!) { order(id: $id) { status } }`,
      `query ($id: ID!) { node(id: $id) { __typename id } }`,
      `mutation ($id: ID!) { cancelOrder(id: $id) { status } }`,
      `mutation ($id: ID!) { updateOrder(id: $id, input: { status: SHIPPED }) { status } }`,
    ]) {
      const ask = async (id: string) => (await api(query, { variables: { id }, token: bob })).body;
      const [foreign, absent] = await Promise.all([ask(order.id), ask(missing)]);
      // The same answer but for the ID itself: null and NOT_FOUND.
      expect(JSON.stringify(foreign).replaceAll(order.id, 'ID')).toBe(JSON.stringify(absent).replaceAll(missing, 'ID'));
      expect(codes(foreign)).toEqual(['NOT_FOUND']);
      // data is { order: null } for a query, null for a mutation's non-null field.
      expect(Object.values(foreign.data ?? {}).filter((value) => value !== null)).toEqual([]);
    }
  });

  it('refuses a move no role may make as INVALID_TRANSITION to the owner as to ADMIN: skipping PROCESSING, cancelling twice', async () => {
    const order = await createOrder(alice, [{ productId: productId(22), quantity: 1 }]);
    expect(codes((await move(order.id, 'SHIPPED', alice)).body)).toEqual(['INVALID_TRANSITION']);
    expect(codes((await move(order.id, 'SHIPPED', admin)).body)).toEqual(['INVALID_TRANSITION']);
    const cancel = `mutation ($id: ID!) { cancelOrder(id: $id) { status } }`;
    expect((await api(cancel, { variables: { id: order.id }, token: alice })).body.data!.cancelOrder.status).toBe('CANCELLED');
    const again = await api(cancel, { variables: { id: order.id }, token: alice });
    expect(again.body.errors).toEqual([
      expect.objectContaining({ path: ['cancelOrder'], extensions: expect.objectContaining({ code: 'INVALID_TRANSITION', from: 'CANCELLED', to: 'CANCELLED' }) }),
    ]);
    expect(codes((await api(cancel, { variables: { id: order.id }, token: bob })).body)).toEqual(['NOT_FOUND']);
  });

  it('updateOrderResult returns each failure as a union member', async () => {
    const order = await createOrder(alice, [{ productId: productId(23), quantity: 1 }]);
    const result = async (id: string, status: string, as: string) =>
      (await api(UPDATE_ORDER_RESULT, { variables: { id, input: { status } }, token: as })).body.data!.updateOrderResult;
    expect(await result(order.id, 'PROCESSING', alice)).toEqual({ __typename: 'InsufficientPermissions', message: 'Not authorized', requiredRole: 'ADMIN' });
    expect(await result(order.id, 'SHIPPED', alice)).toMatchObject({ __typename: 'InvalidOrderTransition', from: 'PENDING', to: 'SHIPPED' });
    expect(await result(order.id, 'PROCESSING', bob)).toMatchObject({ __typename: 'OrderNotFound', orderId: order.id });
    const missing = toGlobalId('Order', 'missing');
    expect(await result(missing, 'PROCESSING', admin)).toMatchObject({ __typename: 'OrderNotFound', orderId: missing });
    expect(await result(order.id, 'DELIVERED', admin)).toMatchObject({ __typename: 'InvalidOrderTransition', from: 'PENDING', to: 'DELIVERED' });
    expect(await result(order.id, 'PROCESSING', admin)).toEqual({ __typename: 'Order', id: order.id, status: 'PROCESSING' });
  });

  it('edits items while PENDING and recomputes the total', async () => {
    const order = await createOrder(alice, [{ productId: productId(24), quantity: 1 }]);
    const { body } = await api(`mutation ($id: ID!, $input: UpdateOrderInput!) { updateOrder(id: $id, input: $input) { total items { quantity unitPrice } } }`, {
      variables: { id: order.id, input: { items: [{ productId: productId(24), quantity: 4 }] } },
      token: alice,
    });
    expect(body.errors).toBeUndefined();
    expect(body.data!.updateOrder.items).toEqual([{ quantity: 4, unitPrice: order.items[0]!.unitPrice }]);
    expect(body.data!.updateOrder.total).toBeCloseTo(4 * order.items[0]!.unitPrice, 2);
  });

  it('of concurrent conflicting updates exactly one wins and none is lost', async () => {
    const order = await createOrder(alice, [{ productId: productId(25), quantity: 1 }]);
    const attempts = await Promise.all(Array.from({ length: 12 }, () => move(order.id, 'PROCESSING', admin)));
    const winners = attempts.filter(({ body }) => body.data?.updateOrder?.status === 'PROCESSING');
    expect(winners).toHaveLength(1);
    for (const { body } of attempts.filter((attempt) => !winners.includes(attempt))) {
      expect(['INVALID_TRANSITION', 'CONFLICT']).toContain(codes(body)?.[0]);
    }
    // A cancel racing a ship: one of them wins, and the order ends in the winner's state.
    const [ship, cancel] = await Promise.all([move(order.id, 'SHIPPED', admin), move(order.id, 'CANCELLED', admin)]);
    const won = [ship, cancel].filter(({ body }) => body.data?.updateOrder);
    expect(won).toHaveLength(1);
    const final = await api(`query ($id: ID!) { order(id: $id) { status } }`, { variables: { id: order.id }, token: admin });
    expect(final.body.data!.order.status).toBe(won[0]!.body.data!.updateOrder.status);
  });
});

describe('errors', () => {
  it('NOT_FOUND carries resource and id, and the nullable field is null', async () => {
    const id = toGlobalId('Order', 'nope');
    const { status, body } = await api(`query ($id: ID!) { order(id: $id) { id } }`, { variables: { id }, token: admin });
    expect(status).toBe(200);
    expect(body.data).toEqual({ order: null });
    expect(body.errors?.[0]).toMatchObject({ message: expect.stringContaining('not found'), path: ['order'], extensions: { code: 'NOT_FOUND', resource: 'Order', id } });
  });

  it('a failed non-null field nulls its nearest nullable parent', async () => {
    const nested = await api(`query ($id: ID!) { user(id: $id) { id orders(limit: 101) { id } } product(id: "${productId(1)}") { id } }`, {
      variables: { id: aliceId },
      token: alice,
    });
    expect(nested.body.data).toEqual({ user: null, product: { id: productId(1) } });
    expect(nested.body.errors?.[0]).toMatchObject({ path: ['user', 'orders'], extensions: { code: 'BAD_USER_INPUT' } });
    // A non-null root field failing nulls the whole data.
    const root = await api(`{ users { id } product(id: "${productId(1)}") { id } }`, { token: alice });
    expect(root.body.data).toBeNull();
    expect(codes(root.body)).toEqual(['FORBIDDEN']);
  });

  it('validation errors name the field and type', async () => {
    const { body } = await api(`{ product(id: "x") { color } }`);
    expect(body.errors?.[0]).toMatchObject({ message: 'Cannot query field "color" on type "Product".', extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } });
  });

  it('every error carries extensions.code and no stack trace', async () => {
    const { body } = await api(`{ order(id: "x") { id } users { id } }`, { token: alice });
    expect(body.errors?.length).toBeGreaterThan(0);
    for (const error of body.errors!) {
      expect(error.extensions?.['code']).toEqual(expect.any(String));
      expect(JSON.stringify(error)).not.toMatch(/stacktrace|\bat .+\.(ts|js):\d+/);
    }
  });
});

describe('batching', () => {
  const PAGE = `query ($id: ID!, $limit: Int!) { user(id: $id) { orders(limit: $limit) { id user { name } items { quantity product { name } } } } }`;

  it('a page of 50 orders with user and items.product costs the same store calls as a page of 5', async () => {
    const carol = await token('USER', 'user-0003');
    for (let i = 0; i < 50; i++) await createOrder(carol, [{ productId: productId(i), quantity: 1 }, { productId: productId(i + 100), quantity: 2 }]);
    const carolId = toGlobalId('User', 'user-0003');
    const cost = async (limit: number) => {
      const before = await Promise.all((['users', 'orders', 'catalog'] as const).map((name) => supergraph.storeCalls(name)));
      const { body } = await api(PAGE, { variables: { id: carolId, limit }, token: admin });
      expect(body.errors).toBeUndefined();
      expect(body.data!.user.orders).toHaveLength(limit);
      const after = await Promise.all((['users', 'orders', 'catalog'] as const).map((name) => supergraph.storeCalls(name)));
      return after.map((value, i) => value - before[i]!);
    };
    const five = await cost(5);
    const fifty = await cost(50);
    expect(fifty).toEqual(five);
    // users: one batch of users; orders: the user's orders; catalog: one batch of products.
    expect(fifty.every((calls) => calls <= 2)).toBe(true);
  });
});
