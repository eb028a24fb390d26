// The order write path without HTTP: input rules, the shared update decision, and compare-and-set under concurrency
// on every backend. Status moves never ask the catalog, so it points at a closed port here; item edits are
// covered against the real catalog in orders.catalog.test.ts.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLogger, toGlobalId, type Identity } from '@ordergraph/core';
import { type DocumentDatabase } from '@ordergraph/store';
import { storeBackends } from '@ordergraph/testkit';
import { createCatalogClient } from '../src/peers/catalog.js';
import { createOrderDomain, decideUpdate, MAX_WRITE_ATTEMPTS, normalizeItems, type OrderDomain } from '../src/domain/orders.js';
import type { OrderStatus } from '../src/store/orders.js';
import { inProcessOrderEvents } from '../src/events.js';
import { OrderStore, type OrderDoc } from '../src/store/orders.js';

const OWNER: Identity = { userId: toGlobalId('User', 'user-owner'), role: 'USER' };
const STRANGER: Identity = { userId: toGlobalId('User', 'user-stranger'), role: 'USER' };
const ADMIN: Identity = { userId: toGlobalId('User', 'user-admin'), role: 'ADMIN' };
const product = (localId: string) => toGlobalId('Product', localId);
const orderId = (order: OrderDoc) => toGlobalId('Order', order._id);
const ID = toGlobalId('Order', 'o1');

const orderIn = (status: OrderStatus): OrderDoc => ({
  _id: 'o1',
  userId: OWNER.userId,
  status,
  items: [],
  totalCents: 0,
  version: 0,
  createdAt: new Date(0),
  updatedAt: new Date(0),
});

describe('normalizeItems', () => {
  it('merges lines of the same product, however its ID is spelled, keeping first-seen order', () => {
    // base64url leaves spare bits in the last character: flipping one spells the same ID differently.
    const canonical = product('ab');
    const respelled = canonical.slice(0, -1) + (canonical.endsWith('g') ? 'h' : 'g');
    expect(respelled).not.toBe(canonical);
    expect(
      normalizeItems([
        { productId: product('b'), quantity: 2 },
        { productId: respelled, quantity: 1 },
        { productId: product('b'), quantity: 3 },
        { productId: canonical, quantity: 4 },
      ]),
    ).toEqual([
      { productId: product('b'), quantity: 5 },
      { productId: canonical, quantity: 5 },
    ]);
  });

  it.each([
    ['no lines', []],
    ['101 lines', Array.from({ length: 101 }, (_, i) => ({ productId: product(`p${i}`), quantity: 1 }))],
    ['quantity 0', [{ productId: product('a'), quantity: 0 }]],
    ['quantity 1001', [{ productId: product('a'), quantity: 1001 }]],
    ['merged quantity over 1000', [{ productId: product('a'), quantity: 600 }, { productId: product('a'), quantity: 401 }]],
    ['a malformed product ID', [{ productId: 'not-an-id', quantity: 1 }]],
    ['an ID of another type', [{ productId: toGlobalId('User', 'u'), quantity: 1 }]],
  ])('refuses %s with BAD_USER_INPUT', (_name, lines) => {
    expect(() => normalizeItems(lines)).toThrow(expect.objectContaining({ extensions: expect.objectContaining({ code: 'BAD_USER_INPUT' }) }));
  });

  it('accepts the limits themselves', () => {
    expect(normalizeItems([{ productId: product('a'), quantity: 1000 }])).toHaveLength(1);
    expect(normalizeItems(Array.from({ length: 100 }, (_, i) => ({ productId: product(`p${i}`), quantity: 1 })))).toHaveLength(100);
  });
});

describe('decideUpdate', () => {
  it("refuses someone else's order as a missing one, before looking at the move", () => {
    expect(decideUpdate(orderIn('PENDING'), ID, { status: 'CANCELLED' }, STRANGER)).toEqual({ reason: 'NOT_FOUND', orderId: ID });
    expect(decideUpdate(orderIn('DELIVERED'), ID, { status: 'PENDING' }, STRANGER)).toEqual({ reason: 'NOT_FOUND', orderId: ID });
    expect(decideUpdate(null, ID, { status: 'CANCELLED' }, STRANGER)).toEqual({ reason: 'NOT_FOUND', orderId: ID });
  });

  it('refuses a move in no role\'s list as INVALID_TRANSITION, to the owner as to an administrator', () => {
    for (const viewer of [OWNER, ADMIN]) {
      expect(decideUpdate(orderIn('PENDING'), ID, { status: 'SHIPPED' }, viewer)).toEqual({ reason: 'INVALID_TRANSITION', from: 'PENDING', to: 'SHIPPED' });
      expect(decideUpdate(orderIn('PENDING'), ID, { status: 'DELIVERED' }, viewer)).toEqual({ reason: 'INVALID_TRANSITION', from: 'PENDING', to: 'DELIVERED' });
      expect(decideUpdate(orderIn('CANCELLED'), ID, { status: 'CANCELLED' }, viewer)).toEqual({ reason: 'INVALID_TRANSITION', from: 'CANCELLED', to: 'CANCELLED' });
    }
  });

  it('refuses the owner a move only an administrator may make as FORBIDDEN, before the items are judged', () => {
    expect(decideUpdate(orderIn('PROCESSING'), ID, { status: 'CANCELLED' }, OWNER)).toEqual({ reason: 'FORBIDDEN', requiredRole: 'ADMIN' });
    const items = [{ productId: product('a'), quantity: 1 }];
    expect(decideUpdate(orderIn('PROCESSING'), ID, { items, status: 'CANCELLED' }, OWNER)).toEqual({ reason: 'FORBIDDEN', requiredRole: 'ADMIN' });
  });

  it('applies the state machine for the owner and for administrators', () => {
    expect(decideUpdate(orderIn('PENDING'), ID, { status: 'CANCELLED' }, OWNER)).toBeNull();
    expect(decideUpdate(orderIn('PENDING'), ID, { status: 'PROCESSING' }, OWNER)).toEqual({ reason: 'FORBIDDEN', requiredRole: 'ADMIN' });
    expect(decideUpdate(orderIn('PENDING'), ID, { status: 'PROCESSING' }, ADMIN)).toBeNull();
    expect(decideUpdate(orderIn('SHIPPED'), ID, { status: 'CANCELLED' }, ADMIN)).toEqual({ reason: 'INVALID_TRANSITION', from: 'SHIPPED', to: 'CANCELLED' });
  });

  it('allows item edits only while PENDING, for the owner and administrators', () => {
    const items = [{ productId: product('a'), quantity: 1 }];
    expect(decideUpdate(orderIn('PENDING'), ID, { items }, OWNER)).toBeNull();
    expect(decideUpdate(orderIn('PENDING'), ID, { items }, ADMIN)).toBeNull();
    expect(decideUpdate(orderIn('PROCESSING'), ID, { items }, ADMIN)).toEqual({ reason: 'ITEMS_LOCKED', status: 'PROCESSING' });
  });

  it('needs both parts of a combined change to be allowed', () => {
    const items = [{ productId: product('a'), quantity: 1 }];
    expect(decideUpdate(orderIn('PENDING'), ID, { items, status: 'PROCESSING' }, ADMIN)).toBeNull();
    expect(decideUpdate(orderIn('PENDING'), ID, { items, status: 'PROCESSING' }, OWNER)).toEqual({ reason: 'FORBIDDEN', requiredRole: 'ADMIN' });
  });
});

describe.each(storeBackends())('order domain ($name)', (backend) => {
  let db: DocumentDatabase;
  let store: OrderStore;
  let orders: OrderDomain;
  const catalogNotNeeded = createCatalogClient('http://127.0.0.1:9/graphql', createLogger('orders-test', 'silent'), { signingSecret: undefined });
  const pendingOrder = () => store.create({ userId: OWNER.userId, items: [{ productId: product('a'), quantity: 2, unitPriceCents: 500 }] });

  beforeEach(async () => {
    db = await backend.open();
    store = await OrderStore.open(db);
    orders = createOrderDomain({ store, catalog: catalogNotNeeded, events: inProcessOrderEvents() });
  });

  afterEach(async () => {
    await db.close();
  });

  it('moves an order and returns it as committed', async () => {
    const order = await pendingOrder();
    const outcome = await orders.update(ADMIN, orderId(order), { status: 'PROCESSING' });
    expect(outcome).toEqual({ ok: true, order: { ...order, status: 'PROCESSING', version: 1, updatedAt: expect.any(Date) } });
    expect(await store.findById(order._id)).toEqual(outcome.ok && outcome.order);
  });

  it('publishes each status change as committed (its new version); refused moves publish nothing', async () => {
    const published: Pick<OrderDoc, 'status' | 'version'>[] = [];
    const commands = createOrderDomain({
      store,
      catalog: catalogNotNeeded,
      events: {
        orderCreated: () => {},
        statusChanged: ({ status, version }) => published.push({ status, version }),
      },
    });
    const order = await pendingOrder();
    await commands.update(ADMIN, orderId(order), { status: 'PROCESSING' });
    await commands.update(ADMIN, orderId(order), { status: 'DELIVERED' });
    await commands.update(STRANGER, orderId(order), { status: 'CANCELLED' });
    await commands.cancel(ADMIN, orderId(order));
    expect(published).toEqual([
      { status: 'PROCESSING', version: 1 },
      { status: 'CANCELLED', version: 2 },
    ]);
  });

  it('refuses a malformed or unknown ID as NOT_FOUND, and anonymous callers as UNAUTHENTICATED', async () => {
    const order = await pendingOrder();
    expect(await orders.update(ADMIN, 'nope', { status: 'PROCESSING' })).toEqual({ ok: false, refusal: { reason: 'NOT_FOUND', orderId: 'nope' } });
    const unknown = toGlobalId('Order', 'missing');
    expect(await orders.cancel(ADMIN, unknown)).toEqual({ ok: false, refusal: { reason: 'NOT_FOUND', orderId: unknown } });
    await expect(orders.cancel(null, orderId(order))).rejects.toMatchObject({ extensions: { code: 'UNAUTHENTICATED' } });
  });

  it('lets the owner cancel once: a second cancel is INVALID_TRANSITION, a stranger\'s NOT_FOUND whatever the state', async () => {
    const order = await pendingOrder();
    expect(await orders.cancel(OWNER, orderId(order))).toMatchObject({ ok: true, order: { status: 'CANCELLED', version: 1 } });
    expect(await orders.cancel(OWNER, orderId(order))).toEqual({ ok: false, refusal: { reason: 'INVALID_TRANSITION', from: 'CANCELLED', to: 'CANCELLED' } });
    expect(await orders.cancel(STRANGER, orderId(order))).toEqual({ ok: false, refusal: { reason: 'NOT_FOUND', orderId: orderId(order) } });
    expect((await store.findById(order._id))!.version).toBe(1);
  });

  it('refuses an empty change', async () => {
    const order = await pendingOrder();
    await expect(orders.update(ADMIN, orderId(order), {})).rejects.toMatchObject({ extensions: { code: 'BAD_USER_INPUT' } });
  });

  it('of 20 concurrent PENDING -> PROCESSING moves, commits exactly one; the rest see INVALID_TRANSITION', async () => {
    const order = await pendingOrder();
    const outcomes = await Promise.all(Array.from({ length: 20 }, () => orders.update(ADMIN, orderId(order), { status: 'PROCESSING' })));
    expect(outcomes.filter((outcome) => outcome.ok)).toHaveLength(1);
    const refusals = outcomes.flatMap((outcome) => (outcome.ok ? [] : [outcome.refusal]));
    expect(refusals).toEqual(Array(19).fill({ reason: 'INVALID_TRANSITION', from: 'PROCESSING', to: 'PROCESSING' }));
    expect(await store.findById(order._id)).toMatchObject({ status: 'PROCESSING', version: 1 });
  });

  it('decides a racing cancel and move again after losing: exactly one lands, the other is refused as now stated', async () => {
    for (let round = 0; round < 10; round++) {
      const order = await pendingOrder();
      const [cancel, move] = await Promise.all([
        orders.cancel(OWNER, orderId(order)),
        orders.update(ADMIN, orderId(order), { status: 'PROCESSING' }),
      ]);
      const stored = (await store.findById(order._id))!;
      expect(stored.version).toBe(1);
      if (cancel.ok) {
        expect(stored.status).toBe('CANCELLED');
        expect(move).toEqual({ ok: false, refusal: { reason: 'INVALID_TRANSITION', from: 'CANCELLED', to: 'PROCESSING' } });
      } else {
        // The owner may not cancel once PROCESSING.
        expect(stored.status).toBe('PROCESSING');
        expect(move.ok).toBe(true);
        expect(cancel).toEqual({ ok: false, refusal: { reason: 'FORBIDDEN', requiredRole: 'ADMIN' } });
      }
    }
  });

  it(`gives up with CONFLICT after ${MAX_WRITE_ATTEMPTS} lost compare-and-sets, having written nothing`, async () => {
    const order = await pendingOrder();
    let attempts = 0;
    // A store on which some other writer always gets there first.
    const losing: OrderStore = Object.assign(Object.create(store) as OrderStore, {
      compareAndSet: async () => {
        attempts++;
        return null;
      },
    });
    const commands = createOrderDomain({ store: losing, catalog: catalogNotNeeded, events: inProcessOrderEvents() });
    await expect(commands.update(ADMIN, orderId(order), { status: 'PROCESSING' })).rejects.toMatchObject({ extensions: { code: 'CONFLICT' } });
    expect(attempts).toBe(MAX_WRITE_ATTEMPTS);
    expect(await store.findById(order._id)).toEqual(order);
  });
});
