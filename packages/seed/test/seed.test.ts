// The seed data set: the same records at every run, scale 1 as it has always been, and parts that agree at any scale.
import { describe, expect, it } from 'vitest';
import { SEED_ADMIN_LOCAL_ID, SEED_USER_LOCAL_ID, seedCounts, seedData, seedOrderAt, seedProductAt, seedUserAt, userLocalId, productLocalId } from '../src/index.js';

describe('seed data', () => {
  it('holds 100 users, 200 products and 1,000 orders at scale 1, the administrator first', () => {
    const data = seedData();
    expect([data.users.length, data.products.length, data.orders.length]).toEqual([100, 200, 1000]);
    expect(data.users[0]).toMatchObject({ localId: SEED_ADMIN_LOCAL_ID, email: 'admin@example.com', role: 'ADMIN' });
    expect(data.users[1]).toMatchObject({ localId: SEED_USER_LOCAL_ID, email: 'user1@example.com', role: 'USER' });
    expect(data.orders[0]!.userLocalId).toBe(SEED_USER_LOCAL_ID);
    // Fixed draws: a change here changes every test that reads seed data.
    expect(data.products[0]!.priceCents).toBe(seedProductAt(0).priceCents);
    expect(data.orders.slice(0, 3).map((order) => [order.userLocalId, order.status, order.items.length])).toMatchSnapshot();
  });

  it('starts every scale with the records of scale 1', () => {
    const small = seedData();
    expect(seedUserAt(99)).toEqual(small.users[99]);
    expect(seedProductAt(199)).toEqual(small.products[199]);
    expect(seedOrderAt(999, 1000)).toEqual(small.orders[999]);
  });

  it('generates any record alone, the same each time', () => {
    expect(seedOrderAt(777_777, 1000)).toEqual(seedOrderAt(777_777, 1000));
    expect(seedUserAt(54_321)).toEqual({ localId: 'user-54321', email: 'user54321@example.com', name: expect.any(String), role: 'USER', createdAt: expect.any(Date) });
  });

  it('keeps orders consistent with the users and products of their scale, at their prices', () => {
    const scale = 50;
    const counts = seedCounts(scale);
    const users = new Set(Array.from({ length: counts.users }, (_, i) => userLocalId(i)));
    for (let i = 0; i < counts.orders; i += 7) {
      const order = seedOrderAt(i, scale);
      expect(users.has(order.userLocalId) && order.userLocalId !== SEED_ADMIN_LOCAL_ID).toBe(true);
      for (const item of order.items) {
        const index = Number(item.productLocalId.slice('product-'.length));
        expect(productLocalId(index)).toBe(item.productLocalId);
        expect(index).toBeLessThan(counts.products);
        expect(item.unitPriceCents).toBe(seedProductAt(index).priceCents);
      }
      expect(new Set(order.items.map((item) => item.productLocalId)).size).toBe(order.items.length);
    }
  });

  it('keeps every timestamp in the past and ordered by index', () => {
    const last = seedCounts(1000);
    expect(seedOrderAt(last.orders - 1, 1000).createdAt.getTime()).toBeLessThan(Date.UTC(2026, 6, 1));
    expect(seedUserAt(last.users - 1).createdAt.getTime()).toBeGreaterThan(seedUserAt(99).createdAt.getTime());
    expect(seedOrderAt(1000, 1000).createdAt.getTime()).toBeGreaterThan(seedOrderAt(999, 1000).createdAt.getTime());
  });

  it('refuses a scale that is not a whole number from 1', () => {
    expect(() => seedCounts(0)).toThrow(RangeError);
    expect(() => seedCounts(1.5)).toThrow(RangeError);
  });
});
