// The orders subgraph over real HTTP: reads and their authorization, `_entities` as the gateway sends them, the
// internal search field, and both forms of updateOrder. Nothing here needs prices, so no catalog runs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toGlobalId } from '@ordergraph/core';
import { seedData, type SeedOrder } from '@ordergraph/seed';
import { UPDATE_ORDER_RESULT, graphql, readCounter, token } from '@ordergraph/testkit';
import { ADMIN_LOCAL_ID, orderGlobalId, productGlobalId, seededOrders, startOrders, type Running } from './support.js';

const ORDER_FIELDS = `id status total createdAt updatedAt user { id } items { product { id } quantity unitPrice subtotal }`;
const ORDER = `query Order($id: ID!) { order(id: $id) { ${ORDER_FIELDS} } }`;
const UPDATE = `mutation Update($id: ID!, $input: UpdateOrderInput!) { updateOrder(id: $id, input: $input) { id status updatedAt } }`;
const CANCEL = `mutation Cancel($id: ID!) { cancelOrder(id: $id) { id status } }`;
const ENTITIES = `query Entities($representations: [_Any!]!) {
  _entities(representations: $representations) {
    ... on Order { id status total }
    ... on User { id orders(limit: 3, offset: 1) { id createdAt } }
  }
}`;

/** The order as the API shows it, computed from the seed independently of the resolvers. */
function expectedOrder(order: SeedOrder) {
  const items = order.items.map((item) => ({
    product: { id: productGlobalId(item.productLocalId) },
    quantity: item.quantity,
    unitPrice: item.unitPriceCents / 100,
    subtotal: (item.quantity * item.unitPriceCents) / 100,
  }));
  return {
    id: orderGlobalId(order),
    status: order.status,
    total: order.items.reduce((sum, item) => sum + item.quantity * item.unitPriceCents, 0) / 100,
    createdAt: order.createdAt.toISOString(),
    updatedAt: order.createdAt.toISOString(),
    user: { id: toGlobalId('User', order.userLocalId) },
    items,
  };
}

/** The seeded orders of a user, newest first. */
const seededOrdersOf = (userLocalId: string) =>
  seedData()
    .orders.filter((order) => order.userLocalId === userLocalId)
    .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime());

const codes = (errors: { extensions?: Record<string, any> }[] | undefined) => (errors ?? []).map((error) => error.extensions?.['code']);

let orders: Running;
let adminToken: string;
/** Users whose orders the read tests expect as seeded. */
const READ_ONLY_USERS = ['user-0001', 'user-0002', 'user-0003'];
const seeded = seededOrders(READ_ONLY_USERS);
const ownerToken = (order: SeedOrder) => token('USER', order.userLocalId);
const strangerToken = (order: SeedOrder) => token('USER', seeded.strangerTo(order));

beforeAll(async () => {
  orders = await startOrders();
  adminToken = await token('ADMIN', ADMIN_LOCAL_ID);
});

afterAll(async () => {
  await orders?.stop();
});

describe('order(id)', () => {
  it('shows the owner their order, priced and totalled in cents exposed as amounts', async () => {
    const order = seeded.take('SHIPPED');
    const { body } = await graphql(orders.url, ORDER, { variables: { id: orderGlobalId(order) }, token: await ownerToken(order) });
    expect(body).toEqual({ data: { order: expectedOrder(order) } });
  });

  it('shows administrators any order', async () => {
    const order = seeded.take('DELIVERED');
    const { body } = await graphql(orders.url, ORDER, { variables: { id: orderGlobalId(order) }, token: adminToken });
    expect(body.data?.['order']).toEqual(expectedOrder(order));
  });

  it("answers another user's order exactly as a missing one: null and NOT_FOUND", async () => {
    const order = seeded.take('DELIVERED');
    const id = orderGlobalId(order);
    const { body } = await graphql(orders.url, ORDER, { variables: { id }, token: await strangerToken(order) });
    expect(body.data).toEqual({ order: null });
    expect(body.errors).toMatchObject([{ message: `Order with id ${id} not found`, path: ['order'], extensions: { code: 'NOT_FOUND', resource: 'Order', id } }]);
  });

  it('refuses anonymous callers with UNAUTHENTICATED, whether or not the order exists', async () => {
    for (const id of [orderGlobalId(seeded.take('DELIVERED')), toGlobalId('Order', 'missing')]) {
      const { body } = await graphql(orders.url, ORDER, { variables: { id } });
      expect(body.data).toEqual({ order: null });
      expect(codes(body.errors)).toEqual(['UNAUTHENTICATED']);
    }
  });

  it.each([
    ['an unknown order', toGlobalId('Order', 'missing')],
    ['a malformed ID', 'not a global id'],
    ['the ID of another type', toGlobalId('User', 'order-0000')],
  ])('answers %s with null and NOT_FOUND', async (_name, id) => {
    const { body } = await graphql(orders.url, ORDER, { variables: { id }, token: adminToken });
    expect(body.data).toEqual({ order: null });
    expect(body.errors).toMatchObject([{ message: `Order with id ${id} not found`, extensions: { code: 'NOT_FOUND', resource: 'Order', id } }]);
  });

  it('rejects an invalid token with 401 before execution', async () => {
    const { status, body } = await graphql(orders.url, ORDER, { variables: { id: 'x' }, token: 'not.a.jwt' });
    expect(status).toBe(401);
    expect(codes(body.errors)).toEqual(['UNAUTHENTICATED']);
  });
});

describe('_entities', () => {
  const findQueries = () => readCounter(orders.metricsUrl, 'datastore_operations_total', { collection: 'orders', operation: 'find' });

  it('resolves a batch of Order references with one store query, null and NOT_FOUND for an unknown one', async () => {
    const owned = seededOrdersOf('user-0001').slice(0, 3);
    const unknown = toGlobalId('Order', 'missing');
    const before = await findQueries();
    const { body } = await graphql(orders.url, ENTITIES, {
      variables: { representations: [...owned.map((order) => ({ __typename: 'Order', id: orderGlobalId(order) })), { __typename: 'Order', id: unknown }] },
      token: adminToken,
    });
    expect(await findQueries()).toBe(before + 1);
    expect(body.data?.['_entities']).toEqual([
      ...owned.map((order) => ({ id: orderGlobalId(order), status: order.status, total: expectedOrder(order).total })),
      null,
    ]);
    expect(body.errors).toMatchObject([{ path: ['_entities', 3], extensions: { code: 'NOT_FOUND', id: unknown } }]);
  });

  it("refuses a user the Order references of someone else's orders, and anonymous callers all of them", async () => {
    const [mine] = seededOrdersOf('user-0001');
    const [theirs] = seededOrdersOf('user-0002');
    const representations = [mine!, theirs!].map((order) => ({ __typename: 'Order', id: orderGlobalId(order) }));
    const asUser = await graphql(orders.url, ENTITIES, { variables: { representations }, token: await token('USER', 'user-0001') });
    expect(asUser.body.data?.['_entities']).toEqual([{ id: orderGlobalId(mine!), status: mine!.status, total: expectedOrder(mine!).total }, null]);
    expect(asUser.body.errors).toMatchObject([{ path: ['_entities', 1], extensions: { code: 'NOT_FOUND' } }]);
    const anonymous = await graphql(orders.url, ENTITIES, { variables: { representations } });
    expect(anonymous.body.data?.['_entities']).toEqual([null, null]);
    expect(codes(anonymous.body.errors)).toEqual(['UNAUTHENTICATED', 'UNAUTHENTICATED']);
  });

  it("adds User.orders, newest first and paged, for a batch of users with one store query", async () => {
    const users = ['user-0001', 'user-0002', 'user-0003'];
    const before = await findQueries();
    const { body } = await graphql(orders.url, ENTITIES, {
      variables: { representations: users.map((user) => ({ __typename: 'User', id: toGlobalId('User', user) })) },
      token: adminToken,
    });
    expect(body.errors).toBeUndefined();
    expect(await findQueries()).toBe(before + 1);
    expect(body.data?.['_entities']).toEqual(
      users.map((user) => ({
        id: toGlobalId('User', user),
        orders: seededOrdersOf(user)
          .slice(1, 4)
          .map((order) => ({ id: orderGlobalId(order), createdAt: order.createdAt.toISOString() })),
      })),
    );
  });

  it("shows a user their own orders only", async () => {
    const representations = ['user-0001', 'user-0002'].map((user) => ({ __typename: 'User', id: toGlobalId('User', user) }));
    const { body } = await graphql(orders.url, ENTITIES, { variables: { representations }, token: await token('USER', 'user-0001') });
    expect(body.data?.['_entities']).toEqual([
      { id: toGlobalId('User', 'user-0001'), orders: expect.any(Array) },
      null,
    ]);
    expect(body.errors).toMatchObject([{ path: ['_entities', 1, 'orders'], extensions: { code: 'FORBIDDEN' } }]);
  });

  it('checks the page arguments of User.orders', async () => {
    const query = `query($representations: [_Any!]!, $limit: Int, $offset: Int) { _entities(representations: $representations) { ... on User { orders(limit: $limit, offset: $offset) { id } } } }`;
    const representations = [{ __typename: 'User', id: toGlobalId('User', 'user-0001') }];
    const all = seededOrdersOf('user-0001').map((order) => ({ id: orderGlobalId(order) }));
    const page = async (variables: Record<string, unknown>) => (await graphql(orders.url, query, { variables: { representations, ...variables }, token: adminToken })).body;
    expect((await page({})).data?.['_entities']).toEqual([{ orders: all.slice(0, 20) }]);
    expect((await page({ limit: 0 })).data?.['_entities']).toEqual([{ orders: [] }]);
    expect((await page({ limit: 100, offset: all.length })).data?.['_entities']).toEqual([{ orders: [] }]);
    expect(codes((await page({ limit: 101 })).errors)).toEqual(['BAD_USER_INPUT']);
    expect(codes((await page({ offset: -1 })).errors)).toEqual(['BAD_USER_INPUT']);
  });
});

describe('_searchOrders', () => {
  const SEARCH = `query($query: String!) { _searchOrders(query: $query, limit: 20) { id score } }`;
  const search = async (query: string, bearer?: string) =>
    (await graphql(orders.url, SEARCH, { variables: { query }, ...(bearer ? { token: bearer } : {}) })).body.data?.['_searchOrders'];

  it('finds an order by its global ID for its owner and administrators, and for nobody else', async () => {
    const order = seeded.take('PENDING');
    const id = orderGlobalId(order);
    expect(await search(id, await ownerToken(order))).toEqual([{ id, score: 3 }]);
    expect(await search(`  ${id} `, adminToken)).toEqual([{ id, score: 3 }]);
    expect(await search(id, await strangerToken(order))).toEqual([]);
    expect(await search(id)).toEqual([]);
  });

  it('finds nothing for unknown or malformed IDs, or free text', async () => {
    for (const query of [toGlobalId('Order', 'missing'), toGlobalId('User', 'user-0001'), 'lamp', '']) {
      expect(await search(query, adminToken)).toEqual([]);
    }
  });
});

describe('updateOrder', () => {
  it('lets an administrator move an order along, stamping updatedAt', async () => {
    const order = seeded.take('PENDING');
    const id = orderGlobalId(order);
    for (const status of ['PROCESSING', 'SHIPPED', 'DELIVERED']) {
      const { body } = await graphql(orders.url, UPDATE, { variables: { id, input: { status } }, token: adminToken });
      expect(body.errors).toBeUndefined();
      expect(body.data?.['updateOrder']).toMatchObject({ id, status });
      expect(Date.parse(body.data?.['updateOrder'].updatedAt)).toBeGreaterThan(order.createdAt.getTime());
    }
    const { body } = await graphql(orders.url, ORDER, { variables: { id }, token: await ownerToken(order) });
    expect(body.data?.['order']).toMatchObject({ status: 'DELIVERED', items: expectedOrder(order).items });
  });

  it('refuses a move the state machine does not have with INVALID_TRANSITION, changing nothing', async () => {
    const order = seeded.take('DELIVERED');
    const id = orderGlobalId(order);
    const { body } = await graphql(orders.url, UPDATE, { variables: { id, input: { status: 'PENDING' } }, token: adminToken });
    expect(body.data).toBeNull();
    expect(body.errors).toMatchObject([
      { message: 'Cannot move an order from DELIVERED to PENDING', path: ['updateOrder'], extensions: { code: 'INVALID_TRANSITION', from: 'DELIVERED', to: 'PENDING' } },
    ]);
    const after = await graphql(orders.url, ORDER, { variables: { id }, token: adminToken });
    expect(after.body.data?.['order']).toMatchObject({ status: 'DELIVERED', updatedAt: order.createdAt.toISOString() });
  });

  it('refuses an owner a move only administrators make as FORBIDDEN, a move no one makes as INVALID_TRANSITION, and strangers everything as NOT_FOUND', async () => {
    const order = seeded.take('PENDING');
    const id = orderGlobalId(order);
    const owner = await ownerToken(order);
    const asOwner = await graphql(orders.url, UPDATE, { variables: { id, input: { status: 'PROCESSING' } }, token: owner });
    expect(asOwner.body.errors).toMatchObject([{ message: 'Not authorized', path: ['updateOrder'], extensions: { code: 'FORBIDDEN' } }]);
    for (const status of ['SHIPPED', 'DELIVERED']) {
      const skipping = await graphql(orders.url, UPDATE, { variables: { id, input: { status } }, token: owner });
      expect(skipping.body.errors).toMatchObject([{ path: ['updateOrder'], extensions: { code: 'INVALID_TRANSITION', from: 'PENDING', to: status } }]);
    }
    for (const status of ['CANCELLED', 'SHIPPED']) {
      const asStranger = await graphql(orders.url, UPDATE, { variables: { id, input: { status } }, token: await strangerToken(order) });
      expect(codes(asStranger.body.errors)).toEqual(['NOT_FOUND']);
    }
    const after = await graphql(orders.url, ORDER, { variables: { id }, token: owner });
    expect(after.body.data?.['order']).toMatchObject({ status: 'PENDING', updatedAt: order.createdAt.toISOString() });
  });

  it('answers unknown IDs with NOT_FOUND, anonymous callers with UNAUTHENTICATED, and empty input with BAD_USER_INPUT', async () => {
    const unknown = toGlobalId('Order', 'missing');
    const notFound = await graphql(orders.url, UPDATE, { variables: { id: unknown, input: { status: 'PROCESSING' } }, token: adminToken });
    expect(notFound.body.errors).toMatchObject([{ extensions: { code: 'NOT_FOUND', resource: 'Order', id: unknown } }]);
    const id = orderGlobalId(seeded.take('PENDING'));
    const anonymous = await graphql(orders.url, UPDATE, { variables: { id, input: { status: 'CANCELLED' } } });
    expect(codes(anonymous.body.errors)).toEqual(['UNAUTHENTICATED']);
    const empty = await graphql(orders.url, UPDATE, { variables: { id, input: {} }, token: adminToken });
    expect(codes(empty.body.errors)).toEqual(['BAD_USER_INPUT']);
  });

  it('refuses item changes once an order has left PENDING with BAD_USER_INPUT, before asking the catalog', async () => {
    const order = seeded.take('PROCESSING');
    const input = { items: [{ productId: productGlobalId('product-0000'), quantity: 1 }] };
    const { body } = await graphql(orders.url, UPDATE, { variables: { id: orderGlobalId(order), input }, token: adminToken });
    expect(body.errors).toMatchObject([{ extensions: { code: 'BAD_USER_INPUT', field: 'items', status: 'PROCESSING' } }]);
  });

  it('of 20 concurrent PENDING -> PROCESSING moves, commits exactly one; the others get INVALID_TRANSITION', async () => {
    const order = seeded.take('PENDING');
    const id = orderGlobalId(order);
    const responses = await Promise.all(
      Array.from({ length: 20 }, () => graphql(orders.url, UPDATE, { variables: { id, input: { status: 'PROCESSING' } }, token: adminToken })),
    );
    const winners = responses.filter(({ body }) => body.data?.['updateOrder']);
    expect(winners).toHaveLength(1);
    expect(responses.flatMap(({ body }) => codes(body.errors))).toEqual(Array(19).fill('INVALID_TRANSITION'));
    // No later write: the order is as the one winner left it.
    const after = await graphql(orders.url, ORDER, { variables: { id }, token: adminToken });
    expect(after.body.data?.['order']).toMatchObject({ status: 'PROCESSING', updatedAt: winners[0]!.body.data?.['updateOrder'].updatedAt });
  });
});

describe('updateOrderResult', () => {
  // A refused write tells the gateway it changed nothing.
  const NOTHING_WRITTEN = { invalidation: [] };
  const updateResult = async (id: string, input: Record<string, unknown>, bearer?: string) =>
    (await graphql(orders.url, UPDATE_ORDER_RESULT, { variables: { id, input }, ...(bearer ? { token: bearer } : {}) })).body;

  it('returns the order on success', async () => {
    const order = seeded.take('PENDING');
    const body = await updateResult(orderGlobalId(order), { status: 'CANCELLED' }, await ownerToken(order));
    expect(body.data).toEqual({ updateOrderResult: { __typename: 'Order', id: orderGlobalId(order), status: 'CANCELLED' } });
    expect(body.errors).toBeUndefined();
  });

  it('returns OrderNotFound for an unknown or malformed ID', async () => {
    for (const id of [toGlobalId('Order', 'missing'), 'garbage']) {
      expect(await updateResult(id, { status: 'PROCESSING' }, adminToken)).toEqual({
        extensions: NOTHING_WRITTEN,
        data: { updateOrderResult: { __typename: 'OrderNotFound', message: `Order with id ${id} not found`, orderId: id } },
      });
    }
  });

  it('returns InsufficientPermissions naming ADMIN to the owner, and OrderNotFound to a stranger', async () => {
    const order = seeded.take('PROCESSING');
    const id = orderGlobalId(order);
    expect(await updateResult(id, { status: 'CANCELLED' }, await ownerToken(order))).toEqual({
      extensions: NOTHING_WRITTEN,
      data: { updateOrderResult: { __typename: 'InsufficientPermissions', message: 'Not authorized', requiredRole: 'ADMIN' } },
    });
    expect(await updateResult(id, { status: 'CANCELLED' }, await strangerToken(order))).toEqual({
      extensions: NOTHING_WRITTEN,
      data: { updateOrderResult: { __typename: 'OrderNotFound', message: `Order with id ${id} not found`, orderId: id } },
    });
  });

  it('returns InvalidOrderTransition with from and to', async () => {
    const order = seeded.take('CANCELLED');
    expect(await updateResult(orderGlobalId(order), { status: 'PROCESSING' }, adminToken)).toEqual({
      extensions: NOTHING_WRITTEN,
      data: {
        updateOrderResult: { __typename: 'InvalidOrderTransition', message: 'Cannot move an order from CANCELLED to PROCESSING', from: 'CANCELLED', to: 'PROCESSING' },
      },
    });
  });

  it('returns InvalidOrderTransition, not InsufficientPermissions, to an owner asking a move no role may make', async () => {
    const order = seeded.take('PENDING');
    expect(await updateResult(orderGlobalId(order), { status: 'SHIPPED' }, await ownerToken(order))).toEqual({
      extensions: NOTHING_WRITTEN,
      data: { updateOrderResult: { __typename: 'InvalidOrderTransition', message: 'Cannot move an order from PENDING to SHIPPED', from: 'PENDING', to: 'SHIPPED' } },
    });
  });

  it('keeps UNAUTHENTICATED and input errors as errors', async () => {
    const order = seeded.take('SHIPPED');
    expect(codes((await updateResult(orderGlobalId(order), { status: 'DELIVERED' })).errors)).toEqual(['UNAUTHENTICATED']);
    const items = [{ productId: productGlobalId('product-0000'), quantity: 1 }];
    expect(codes((await updateResult(orderGlobalId(order), { items }, adminToken)).errors)).toEqual(['BAD_USER_INPUT']);
  });
});

describe('cancelOrder', () => {
  it('lets the owner cancel while PENDING', async () => {
    const order = seeded.take('PENDING');
    const { body } = await graphql(orders.url, CANCEL, { variables: { id: orderGlobalId(order) }, token: await ownerToken(order) });
    expect(body.data).toEqual({ cancelOrder: { id: orderGlobalId(order), status: 'CANCELLED' } });
    expect(body.errors).toBeUndefined();
  });

  it('lets only administrators cancel while PROCESSING', async () => {
    const order = seeded.take('PROCESSING');
    const asOwner = await graphql(orders.url, CANCEL, { variables: { id: orderGlobalId(order) }, token: await ownerToken(order) });
    expect(codes(asOwner.body.errors)).toEqual(['FORBIDDEN']);
    const asAdmin = await graphql(orders.url, CANCEL, { variables: { id: orderGlobalId(order) }, token: adminToken });
    expect(asAdmin.body.data?.['cancelOrder']).toEqual({ id: orderGlobalId(order), status: 'CANCELLED' });
  });

  it('refuses the owner a second cancel with INVALID_TRANSITION: no role may cancel a CANCELLED order', async () => {
    const order = seeded.take('PENDING');
    const variables = { id: orderGlobalId(order) };
    const owner = await ownerToken(order);
    expect((await graphql(orders.url, CANCEL, { variables, token: owner })).body.data?.['cancelOrder']).toMatchObject({ status: 'CANCELLED' });
    const again = await graphql(orders.url, CANCEL, { variables, token: owner });
    expect(again.body.errors).toMatchObject([
      { message: 'Cannot move an order from CANCELLED to CANCELLED', path: ['cancelOrder'], extensions: { code: 'INVALID_TRANSITION', from: 'CANCELLED', to: 'CANCELLED' } },
    ]);
    expect(codes((await graphql(orders.url, CANCEL, { variables, token: await strangerToken(order) })).body.errors)).toEqual(['NOT_FOUND']);
  });

  it.each(['SHIPPED', 'DELIVERED', 'CANCELLED'] as const)('refuses to cancel a %s order with INVALID_TRANSITION', async (status) => {
    const order = seeded.take(status);
    const { body } = await graphql(orders.url, CANCEL, { variables: { id: orderGlobalId(order) }, token: adminToken });
    expect(body.errors).toMatchObject([{ extensions: { code: 'INVALID_TRANSITION', from: status, to: 'CANCELLED' } }]);
  });
});
