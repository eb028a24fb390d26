// The order state machine, exhaustively: every (from, to) pair for each role, and item edits in every status.
import { describe, expect, it } from 'vitest';
import { checkItemsEdit, checkStatusChange, isTerminal, type OrderActor } from '../src/domain/transitions.js';
import { ORDER_STATUSES, type OrderStatus } from '../src/store/orders.js';

type Expected = 'allowed' | 'INVALID_TRANSITION' | 'FORBIDDEN';

/** The state-machine table of the design, written out longhand so the test does not restate the implementation. */
const EXPECTED: Record<OrderActor, Record<string, Expected>> = {
  ADMIN: {
    'PENDING->PROCESSING': 'allowed',
    'PENDING->CANCELLED': 'allowed',
    'PROCESSING->SHIPPED': 'allowed',
    'PROCESSING->CANCELLED': 'allowed',
    'SHIPPED->DELIVERED': 'allowed',
  },
  OWNER: {
    'PENDING->CANCELLED': 'allowed',
    'PENDING->PROCESSING': 'FORBIDDEN',
    'PROCESSING->SHIPPED': 'FORBIDDEN',
    'PROCESSING->CANCELLED': 'FORBIDDEN',
    'SHIPPED->DELIVERED': 'FORBIDDEN',
  },
};

const pairs = ORDER_STATUSES.flatMap((from) => ORDER_STATUSES.map((to) => [from, to] as [OrderStatus, OrderStatus]));
const outcome = (from: OrderStatus, to: OrderStatus, actor: OrderActor): Expected => {
  const verdict = checkStatusChange(from, to, actor);
  return verdict.allowed ? 'allowed' : verdict.reason === 'FORBIDDEN' ? 'FORBIDDEN' : 'INVALID_TRANSITION';
};

describe('checkStatusChange', () => {
  describe.each(['ADMIN', 'OWNER'] as const)('as %s', (actor) => {
    it.each(pairs)('%s -> %s', (from, to) => {
      // A pair the table does not name is in no role's list: invalid for owner and administrator alike.
      expect(outcome(from, to, actor)).toBe(EXPECTED[actor][`${from}->${to}`] ?? 'INVALID_TRANSITION');
    });
  });

  it('names ADMIN as the role an owner lacks', () => {
    expect(checkStatusChange('PROCESSING', 'CANCELLED', 'OWNER')).toEqual({ allowed: false, reason: 'FORBIDDEN', requiredRole: 'ADMIN' });
  });

  it('refuses same-status "moves" as invalid for everyone: re-cancelling a CANCELLED order included', () => {
    for (const status of ORDER_STATUSES) {
      expect(checkStatusChange(status, status, 'ADMIN')).toEqual({ allowed: false, reason: 'INVALID_TRANSITION' });
      expect(checkStatusChange(status, status, 'OWNER')).toEqual({ allowed: false, reason: 'INVALID_TRANSITION' });
    }
  });

  it('answers an owner FORBIDDEN only for a move an administrator could make', () => {
    expect(checkStatusChange('PENDING', 'PROCESSING', 'OWNER')).toEqual({ allowed: false, reason: 'FORBIDDEN', requiredRole: 'ADMIN' });
    expect(checkStatusChange('PENDING', 'PROCESSING', 'ADMIN')).toEqual({ allowed: true });
    // Skipping PROCESSING, or jumping to the end, is no one's move.
    for (const to of ['SHIPPED', 'DELIVERED'] as const) {
      expect(checkStatusChange('PENDING', to, 'OWNER')).toEqual({ allowed: false, reason: 'INVALID_TRANSITION' });
      expect(checkStatusChange('PENDING', to, 'ADMIN')).toEqual({ allowed: false, reason: 'INVALID_TRANSITION' });
    }
  });

  it('treats exactly DELIVERED and CANCELLED as terminal', () => {
    expect(ORDER_STATUSES.filter(isTerminal)).toEqual(['DELIVERED', 'CANCELLED']);
  });
});

describe('checkItemsEdit', () => {
  it.each(ORDER_STATUSES)('%s', (status) => {
    expect(checkItemsEdit(status)).toEqual(status === 'PENDING' ? { allowed: true } : { allowed: false, reason: 'ITEMS_LOCKED' });
  });
});
