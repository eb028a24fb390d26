// Orders priced by the real catalog subgraph: createOrder, item edits, an unreachable catalog, and concurrent edits.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger, toGlobalId } from '@ordergraph/core';
import { EmbeddedDatabase } from '@ordergraph/store';
import { graphql, token } from '@ordergraph/testkit';
import { createCatalogClient } from '../src/peers/catalog.js';
import { createOrderDomain } from '../src/domain/orders.js';
import { inProcessOrderEvents } from '../src/events.js';
import { OrderStore } from '../src/store/orders.js';
import { ADMIN_LOCAL_ID, productGlobalId, startCatalog, startOrders, UNREACHABLE_CATALOG_URL, type Running } from './support.js';

const ORDER_FIELDS = `id status total user { id } items { product { id } quantity unitPrice subtotal }`;
const CREATE = `mutation Create($input: CreateOrderInput!) { createOrder(input: $input) { ${ORDER_FIELDS} } }`;
const UPDATE = `mutation Update($id: ID!, $input: UpdateOrderInput!) { updateOrder(id: $id, input: $input) { ${ORDER_FIELDS} updatedAt } }`;
const ORDER = `query Order($id: ID!) { order(id: $id) { ${ORDER_FIELDS} } }`;
const USER_ORDERS = `query($representations: [_Any!]!) { _entities(representations: $representations) { ... on User { orders(limit: 100) { id } } } }`;

const LAMP = productGlobalId('product-0000');
const CHAIR = productGlobalId('product-0001');
const MUG = productGlobalId('product-0002');
const OWNER = 'user-0001';

const codes = (errors: { extensions?: Record<string, any> }[] | undefined) => (errors ?? []).map((error) => error.extensions?.['code']);

let catalog: Running;
let orders: Running;
let ownerToken: string;
let adminToken: string;

/** What the catalog charges for a product right now, asked the way any client would. */
async function currentPrice(productId: string): Promise<number> {
  const { body } = await graphql(catalog.url, `query($id: ID!) { product(id: $id) { currentPrice } }`, { variables: { id: productId } });
  return body.data?.['product'].currentPrice as number;
}

async function createOrder(items: { productId: string; quantity: number }[], bearer = ownerToken) {
  return (await graphql(orders.url, CREATE, { variables: { input: { items } }, token: bearer })).body;
}

beforeAll(async () => {
  catalog = await startCatalog();
  orders = await startOrders(catalog.url);
  ownerToken = await token('USER', OWNER);
  adminToken = await token('ADMIN', ADMIN_LOCAL_ID);
});

afterAll(async () => {
  await orders?.stop();
  await catalog?.stop();
});

describe('createOrder', () => {
  it("places a PENDING order for the viewer at the catalog's prices, merging lines of the same product", async () => {
    const [lamp, chair] = [await currentPrice(LAMP), await currentPrice(CHAIR)];
    const body = await createOrder([
      { productId: LAMP, quantity: 2 },
      { productId: CHAIR, quantity: 1 },
      { productId: LAMP, quantity: 1 },
    ]);
    expect(body.errors).toBeUndefined();
    const order = body.data?.['createOrder'];
    expect(order).toEqual({
      id: expect.any(String),
      status: 'PENDING',
      total: Math.round(3 * lamp * 100 + chair * 100) / 100,
      user: { id: toGlobalId('User', OWNER) },
      items: [
        { product: { id: LAMP }, quantity: 3, unitPrice: lamp, subtotal: Math.round(3 * lamp * 100) / 100 },
        { product: { id: CHAIR }, quantity: 1, unitPrice: chair, subtotal: chair },
      ],
    });
    const read = await graphql(orders.url, ORDER, { variables: { id: order.id }, token: ownerToken });
    expect(read.body.data?.['order']).toEqual(order);
  });

  it('keeps the price an order was placed at when the catalog price changes later', async () => {
    const before = await currentPrice(MUG);
    const placed = (await createOrder([{ productId: MUG, quantity: 1 }])).data?.['createOrder'];
    const changed = await graphql(catalog.url, `mutation($id: ID!, $input: UpdateProductInput!) { updateProduct(id: $id, input: $input) { currentPrice } }`, {
      variables: { id: MUG, input: { price: before + 10 } },
      token: adminToken,
    });
    expect(changed.body.data?.['updateProduct'].currentPrice).toBe(before + 10);
    const later = (await createOrder([{ productId: MUG, quantity: 1 }])).data?.['createOrder'];
    expect(later.items[0].unitPrice).toBe(before + 10);
    const read = await graphql(orders.url, ORDER, { variables: { id: placed.id }, token: ownerToken });
    expect(read.body.data?.['order'].items[0].unitPrice).toBe(before);
  });

  it('takes no prices from the client', async () => {
    const { status, body } = await graphql(orders.url, CREATE, {
      variables: { input: { items: [{ productId: LAMP, quantity: 1, unitPrice: 0.01 }] } },
      token: ownerToken,
    });
    expect(status).toBe(400);
    expect(codes(body.errors)).toEqual(['BAD_USER_INPUT']);
  });

  it('refuses an unknown product with BAD_USER_INPUT naming it, and places nothing', async () => {
    const countOrders = async () => {
      const { body } = await graphql(orders.url, USER_ORDERS, { variables: { representations: [{ __typename: 'User', id: toGlobalId('User', OWNER) }] }, token: ownerToken });
      return (body.data?.['_entities'][0].orders as unknown[]).length;
    };
    const before = await countOrders();
    const unknown = productGlobalId('product-9999');
    const body = await createOrder([{ productId: LAMP, quantity: 1 }, { productId: unknown, quantity: 1 }]);
    expect(body.data).toBeNull();
    expect(body.errors).toMatchObject([{ message: `Product ${unknown} does not exist`, extensions: { code: 'BAD_USER_INPUT', productId: unknown } }]);
    expect(await countOrders()).toBe(before);
  });

  it.each([
    ['no items', []],
    ['a malformed product ID', [{ productId: 'nope', quantity: 1 }]],
    ['quantity 0', [{ productId: LAMP, quantity: 0 }]],
    ['quantity 1001', [{ productId: LAMP, quantity: 1001 }]],
  ])('refuses %s with BAD_USER_INPUT', async (_name, items) => {
    expect(codes((await createOrder(items)).errors)).toEqual(['BAD_USER_INPUT']);
  });

  it('refuses anonymous callers with UNAUTHENTICATED', async () => {
    const { body } = await graphql(orders.url, CREATE, { variables: { input: { items: [{ productId: LAMP, quantity: 1 }] } } });
    expect(codes(body.errors)).toEqual(['UNAUTHENTICATED']);
  });

  it('answers SUBGRAPH_UNAVAILABLE when the catalog cannot be reached', async () => {
    const cut = await startOrders(UNREACHABLE_CATALOG_URL);
    try {
      const { body } = await graphql(cut.url, CREATE, { variables: { input: { items: [{ productId: LAMP, quantity: 1 }] } }, token: ownerToken });
      expect(body.data).toBeNull();
      expect(body.errors).toMatchObject([{ path: ['createOrder'], extensions: { code: 'SUBGRAPH_UNAVAILABLE' } }]);
    } finally {
      await cut.stop();
    }
  });
});

describe("what a write tells the gateway's entity cache", () => {
  it('each committed write names its order and its owner in extensions.invalidation; a refused one an empty list', async () => {
    const owner = toGlobalId('User', OWNER);
    const named = (id: string) => [
      { kind: 'entity', subgraph: 'orders', type: 'Order', key: { id } },
      { kind: 'entity', subgraph: 'orders', type: 'User', key: { id: owner } },
    ];
    const created = await createOrder([{ productId: LAMP, quantity: 1 }]);
    const id = created.data!['createOrder'].id as string;
    expect(created.extensions?.['invalidation']).toEqual(named(id));
    const updated = (await graphql(orders.url, UPDATE, { variables: { id, input: { items: [{ productId: MUG, quantity: 2 }] } }, token: ownerToken })).body;
    expect(updated.extensions?.['invalidation']).toEqual(named(id));
    const refused = await createOrder([{ productId: productGlobalId('product-9999'), quantity: 1 }]);
    expect(codes(refused.errors)).toEqual(['BAD_USER_INPUT']);
    expect(refused.extensions?.['invalidation']).toEqual([]);
  });
});

describe('updateOrder items', () => {
  it('replaces the items of a PENDING order at current prices and recomputes the total', async () => {
    const placed = (await createOrder([{ productId: LAMP, quantity: 1 }])).data?.['createOrder'];
    const mug = await currentPrice(MUG);
    const { body } = await graphql(orders.url, UPDATE, {
      variables: { id: placed.id, input: { items: [{ productId: MUG, quantity: 4 }] } },
      token: ownerToken,
    });
    expect(body.errors).toBeUndefined();
    expect(body.data?.['updateOrder']).toMatchObject({
      id: placed.id,
      status: 'PENDING',
      total: Math.round(4 * mug * 100) / 100,
      items: [{ product: { id: MUG }, quantity: 4, unitPrice: mug, subtotal: Math.round(4 * mug * 100) / 100 }],
    });
  });

  it('lets an administrator change items and move the order in one write', async () => {
    const placed = (await createOrder([{ productId: LAMP, quantity: 1 }])).data?.['createOrder'];
    const { body } = await graphql(orders.url, UPDATE, {
      variables: { id: placed.id, input: { status: 'PROCESSING', items: [{ productId: CHAIR, quantity: 2 }] } },
      token: adminToken,
    });
    expect(body.data?.['updateOrder']).toMatchObject({ status: 'PROCESSING', items: [{ product: { id: CHAIR }, quantity: 2 }] });
  });

  it('refuses an unknown product without changing the order', async () => {
    const placed = (await createOrder([{ productId: LAMP, quantity: 1 }])).data?.['createOrder'];
    const { body } = await graphql(orders.url, UPDATE, {
      variables: { id: placed.id, input: { items: [{ productId: productGlobalId('product-9999'), quantity: 1 }] } },
      token: ownerToken,
    });
    expect(codes(body.errors)).toEqual(['BAD_USER_INPUT']);
    const read = await graphql(orders.url, ORDER, { variables: { id: placed.id }, token: ownerToken });
    expect(read.body.data?.['order']).toEqual(placed);
  });

  it('of 20 concurrent item edits, each commits or gets CONFLICT, and the order is one of those committed', async () => {
    const placed = (await createOrder([{ productId: LAMP, quantity: 1 }])).data?.['createOrder'];
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        graphql(orders.url, UPDATE, { variables: { id: placed.id, input: { items: [{ productId: CHAIR, quantity: i + 1 }] } }, token: ownerToken }),
      ),
    );
    const committed = responses.flatMap(({ body }) => (body.data?.['updateOrder'] ? [body.data['updateOrder']] : []));
    expect(committed.length).toBeGreaterThan(0);
    expect(responses.flatMap(({ body }) => codes(body.errors))).toEqual(Array(20 - committed.length).fill('CONFLICT'));
    // The order is exactly one of the committed edits, never a mix of two.
    const read = await graphql(orders.url, ORDER, { variables: { id: placed.id }, token: ownerToken });
    expect(committed.map(({ updatedAt: _updatedAt, ...fields }) => fields)).toContainEqual(read.body.data?.['order']);
    expect(read.body.data?.['order'].total).toBe(read.body.data?.['order'].items[0].subtotal);
  });

  it('never edits the items of an order that a concurrent move took out of PENDING', async () => {
    for (let round = 0; round < 5; round++) {
      const placed = (await createOrder([{ productId: LAMP, quantity: 1 }])).data?.['createOrder'];
      const [edit, move] = await Promise.all([
        graphql(orders.url, UPDATE, { variables: { id: placed.id, input: { items: [{ productId: MUG, quantity: 7 }] } }, token: ownerToken }),
        graphql(orders.url, UPDATE, { variables: { id: placed.id, input: { status: 'PROCESSING' } }, token: adminToken }),
      ]);
      expect(move.body.data?.['updateOrder'].status).toBe('PROCESSING');
      const read = (await graphql(orders.url, ORDER, { variables: { id: placed.id }, token: ownerToken })).body.data?.['order'];
      if (edit.body.data?.['updateOrder']) {
        // The edit landed first, while PENDING; the move kept it.
        expect(read.items).toMatchObject([{ product: { id: MUG }, quantity: 7 }]);
        expect(move.body.data?.['updateOrder'].items).toEqual(read.items);
      } else {
        expect(codes(edit.body.errors)).toEqual(['BAD_USER_INPUT']);
        expect(read.items).toEqual(placed.items);
      }
      expect(read.status).toBe('PROCESSING');
    }
  });
});

describe('compare-and-set with catalog prices', () => {
  it('bumps the version exactly once per committed item edit', async () => {
    const db = new EmbeddedDatabase();
    const store = await OrderStore.open(db);
    let attempts = 0;
    const counting: OrderStore = Object.assign(Object.create(store) as OrderStore, {
      compareAndSet: (...args: Parameters<OrderStore['compareAndSet']>) => {
        attempts++;
        return store.compareAndSet(...args);
      },
    });
    const commands = createOrderDomain({
      store: counting,
      catalog: createCatalogClient(catalog.url, createLogger('orders-test', 'silent'), { signingSecret: undefined }),
      events: inProcessOrderEvents(),
    });
    const owner = { userId: toGlobalId('User', OWNER), role: 'USER' as const };
    const placed = await commands.create(owner, { items: [{ productId: LAMP, quantity: 1 }] });
    const id = toGlobalId('Order', placed._id);
    const outcomes = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) => commands.update(owner, id, { items: [{ productId: CHAIR, quantity: i + 1 }] })),
    );
    const committed = outcomes.flatMap((outcome) => (outcome.status === 'fulfilled' && outcome.value.ok ? [outcome.value.order] : []));
    const rejected = outcomes.flatMap((outcome) => (outcome.status === 'rejected' ? [outcome.reason as { extensions?: Record<string, unknown> }] : []));
    expect(committed.length + rejected.length).toBe(20);
    // All read version 0 before the first price came back, so writers did lose races and decide again.
    expect(attempts).toBeGreaterThan(committed.length);
    expect(rejected.map((error) => error.extensions?.['code'])).toEqual(Array(rejected.length).fill('CONFLICT'));
    // Every commit took its own version, and the stored order is the one at the highest.
    expect(committed.map((order) => order.version).sort((a, b) => a - b)).toEqual(committed.map((_, i) => i + 1));
    expect(await store.findById(placed._id)).toEqual(committed.find((order) => order.version === committed.length));
    await db.close();
  });
});
