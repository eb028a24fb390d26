// The per-subscriber filter that keeps an order's status events in commit order across replicas.
import { describe, expect, it } from 'vitest';
import { inCommitOrder } from '../src/events.js';
import type { OrderDoc } from '../src/store/orders.js';

const at = (version: number, userId = 'u1') => ({ _id: 'o1', version, userId }) as unknown as OrderDoc;

describe('inCommitOrder', () => {
  it('lets through only versions newer than the start and than the last one let through', () => {
    const accept = inCommitOrder(2, () => true);
    expect([1, 2, 3, 5, 4, 5, 6].map((version) => accept(at(version)))).toEqual([false, false, true, true, false, false, true]);
  });

  it('drops what the caller refuses without counting it as seen', () => {
    const accept = inCommitOrder(0, (order) => order.userId === 'u1');
    expect(accept(at(3, 'u2'))).toBe(false);
    expect(accept(at(2))).toBe(true);
  });
});
