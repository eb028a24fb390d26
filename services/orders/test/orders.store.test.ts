// The OrderStore contract: the same answers on every backend (embedded always, MongoDB when MONGO_URL is set).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { toGlobalId } from '@ordergraph/core';
import { type DocumentDatabase } from '@ordergraph/store';
import { seedData } from '@ordergraph/seed';
import { recordingDatabase, storeBackends, unindexedQueries } from '@ordergraph/testkit';
import { seedOrders } from '../src/seed.js';
import { OrderStore, type LineItemDoc, type OrderDoc } from '../src/store/orders.js';

const at = (minute: number) => new Date(Date.UTC(2026, 5, 1, 12, minute));
const ADA = toGlobalId('User', 'user-ada');
const BOB = toGlobalId('User', 'user-bob');
const item = (product: string, quantity: number, unitPriceCents: number): LineItemDoc => ({
  productId: toGlobalId('Product', product),
  quantity,
  unitPriceCents,
});

describe.each(storeBackends())('OrderStore ($name)', (backend) => {
  let db: DocumentDatabase;
  let store: OrderStore;
  /** Creates one single-item order per user given, one minute apart, in that order. */
  const createFor = async (...userIds: string[]): Promise<OrderDoc[]> => {
    const docs: OrderDoc[] = [];
    for (const [i, userId] of userIds.entries()) docs.push(await store.create({ userId, items: [item('p', 1, 100)] }, at(i)));
    return docs;
  };

  beforeEach(async () => {
    db = await backend.open();
    store = await OrderStore.open(db);
  });

  afterEach(async () => {
    await db.close();
  });

  describe('create and findByIds', () => {
    it('stores a PENDING order at version 0 with its total, and reads it back unchanged', async () => {
      const items = [item('a', 2, 1050), item('b', 3, 199)];
      const created = await store.create({ userId: ADA, items }, at(0));
      expect(created).toMatchObject({ userId: ADA, status: 'PENDING', items, totalCents: 2697, version: 0, createdAt: at(0), updatedAt: at(0) });
      expect(await store.findById(created._id)).toEqual(created);
    });

    it('answers in key order, repeats included, with null for a missing id', async () => {
      const [a, b] = await createFor(ADA, BOB);
      const found = await store.findByIds([b!._id, 'missing', a!._id, b!._id]);
      expect(found.map((doc) => doc?._id ?? null)).toEqual([b!._id, null, a!._id, b!._id]);
      expect(await store.findByIds([])).toEqual([]);
      expect(await store.findById('missing')).toBeNull();
    });
  });

  describe('findByUserIds', () => {
    it("answers each user's orders newest first, in key order, with [] for a user without orders", async () => {
      const [ada1, bob1, ada2, ada3] = await createFor(ADA, BOB, ADA, ADA);
      const found = await store.findByUserIds([BOB, 'nobody', ADA, BOB], 10);
      expect(found.map((docs) => docs.map((doc) => doc._id))).toEqual([
        [bob1!._id],
        [],
        [ada3!._id, ada2!._id, ada1!._id],
        [bob1!._id],
      ]);
    });

    it('keeps at most limitPerUser orders per user, for one user and for several', async () => {
      const [, , ada2, ada3] = await createFor(ADA, BOB, ADA, ADA);
      expect((await store.findByUserIds([ADA], 2))[0]!.map((doc) => doc._id)).toEqual([ada3!._id, ada2!._id]);
      const [ada, bob] = await store.findByUserIds([ADA, BOB], 2);
      expect(ada!.map((doc) => doc._id)).toEqual([ada3!._id, ada2!._id]);
      expect(bob).toHaveLength(1);
    });

    it('breaks createdAt ties by id, newest id first', async () => {
      const tied = [await store.create({ userId: ADA, items: [] }, at(5)), await store.create({ userId: ADA, items: [] }, at(5))];
      const ids = tied.map((doc) => doc._id).sort().reverse();
      expect((await store.findByUserIds([ADA], 10))[0]!.map((doc) => doc._id)).toEqual(ids);
    });

    it('returns nothing for limit 0 (which both backends would read as "no limit")', async () => {
      await createFor(ADA);
      expect(await store.findByUserIds([ADA], 0)).toEqual([[]]);
    });
  });

  describe('compareAndSet', () => {
    it('writes at the current version, bumps it, stamps updatedAt and recomputes the total', async () => {
      const [order] = await createFor(ADA);
      const items = [item('c', 4, 250)];
      const updated = await store.compareAndSet(order!, { status: 'PROCESSING', items }, at(30));
      expect(updated).toMatchObject({ status: 'PROCESSING', items, totalCents: 1000, version: 1, createdAt: at(0), updatedAt: at(30) });
      expect(await store.findById(order!._id)).toEqual(updated);
    });

    it('leaves fields it was not given as they are', async () => {
      const [order] = await createFor(ADA);
      const updated = await store.compareAndSet(order!, { status: 'CANCELLED' }, at(30));
      expect(updated).toMatchObject({ status: 'CANCELLED', items: order!.items, totalCents: order!.totalCents, version: 1 });
    });

    it('matches nothing at a stale version, and changes nothing', async () => {
      const [order] = await createFor(ADA);
      const first = await store.compareAndSet(order!, { status: 'PROCESSING' });
      expect(await store.compareAndSet(order!, { status: 'CANCELLED' })).toBeNull();
      expect(await store.findById(order!._id)).toEqual(first);
      expect(first).toMatchObject({ status: 'PROCESSING', version: 1 });
    });

    it('lets exactly one of many writers at the same version win', async () => {
      const [order] = await createFor(ADA);
      const results = await Promise.all(Array.from({ length: 10 }, () => store.compareAndSet(order!, { status: 'PROCESSING' })));
      expect(results.filter((result) => result !== null)).toHaveLength(1);
      expect(await store.findById(order!._id)).toMatchObject({ version: 1 });
    });

    it('matches nothing for an unknown id', async () => {
      const [order] = await createFor(ADA);
      expect(await store.compareAndSet({ ...order!, _id: 'missing' }, { status: 'PROCESSING' })).toBeNull();
    });
  });

  describe('seed', () => {
    it('loads the shared orders once, as the seed defines them, with global user and product IDs', async () => {
      expect(await seedOrders(store)).toBe(1000);
      expect(await seedOrders(store)).toBe(0);
      const first = seedData().orders[0]!;
      const items = first.items.map((line) => ({
        productId: toGlobalId('Product', line.productLocalId),
        quantity: line.quantity,
        unitPriceCents: line.unitPriceCents,
      }));
      expect(await store.findById(first.localId)).toEqual({
        _id: first.localId,
        userId: toGlobalId('User', first.userLocalId),
        status: first.status,
        items,
        totalCents: items.reduce((sum, line) => sum + line.quantity * line.unitPriceCents, 0),
        version: 0,
        createdAt: first.createdAt,
        updatedAt: first.createdAt,
      });
      const ofFirstUser = seedData()
        .orders.filter((order) => order.userLocalId === first.userLocalId)
        .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime());
      expect((await store.findByUserIds([toGlobalId('User', first.userLocalId)], 100))[0]!.map((doc) => doc._id)).toEqual(
        ofFirstUser.map((order) => order.localId),
      );
    });

    it('leaves a collection that already has orders alone', async () => {
      await createFor(ADA);
      expect(await seedOrders(store)).toBe(0);
      expect((await store.findByUserIds([ADA], 100))[0]).toHaveLength(1);
    });
  });

  describe('indexes', () => {
    it('answers every query it sends from an index (explained by the backend itself)', async () => {
      const recorded = recordingDatabase(db);
      const indexed = await OrderStore.open(recorded.db);
      await seedOrders(indexed);
      const [ada] = await createFor(ADA);
      const [first] = await indexed.findByIds(['order-0000', 'order-0001']);
      await indexed.findById('order-0002');
      await indexed.findByUserIds([first!.userId], 20);
      await indexed.findByUserIds([first!.userId], 5, 5);
      await indexed.findByUserIds([first!.userId, ADA, BOB], 5, 5);
      await indexed.compareAndSet(ada!, { status: 'PROCESSING' });
      expect(recorded.queries.length).toBeGreaterThan(5);
      expect(await unindexedQueries(recorded.queries)).toEqual([]);
    });
  });
});
