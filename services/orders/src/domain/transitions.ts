// The order state machine, and the only place that decides which status moves and item edits
// exist and who may make them. Pure: no database, no GraphQL.
import type { OrderStatus } from '../store/orders.js';

/** How the caller stands to an order they may read: its owner, or an administrator (who may also be its owner). */
export type OrderActor = 'OWNER' | 'ADMIN';

/** Every allowed move; DELIVERED and CANCELLED are terminal. Same-status "moves" are not moves. */
const NEXT: Readonly<Record<OrderStatus, readonly OrderStatus[]>> = {
  PENDING: ['PROCESSING', 'CANCELLED'],
  PROCESSING: ['SHIPPED', 'CANCELLED'],
  SHIPPED: ['DELIVERED'],
  DELIVERED: [],
  CANCELLED: [],
};

/** The allowed moves an owner may make on their own order; every other allowed move needs ADMIN. */
const OWNER_MOVES: Readonly<Partial<Record<OrderStatus, readonly OrderStatus[]>>> = {
  PENDING: ['CANCELLED'],
};

/** Items may change only in this status, by the owner or an administrator. */
export const EDITABLE_STATUS: OrderStatus = 'PENDING';

export type Verdict =
  | { allowed: true }
  | { allowed: false; reason: 'INVALID_TRANSITION' }
  | { allowed: false; reason: 'FORBIDDEN'; requiredRole: 'ADMIN' }
  | { allowed: false; reason: 'ITEMS_LOCKED' };

const ALLOWED: Verdict = { allowed: true };
const NEEDS_ADMIN: Verdict = { allowed: false, reason: 'FORBIDDEN', requiredRole: 'ADMIN' };

export const isTerminal = (status: OrderStatus): boolean => NEXT[status].length === 0;

/**
 * Whether `actor` may move an order from `from` to `to`. Permission is checked before state: an owner asking for any
 * move but their own (one that does not exist included) needs ADMIN, so the answer does not teach them the state
 * machine; for an administrator a move that does not exist is invalid.
 */
export function checkStatusChange(from: OrderStatus, to: OrderStatus, actor: OrderActor): Verdict {
  if (actor === 'OWNER' && !OWNER_MOVES[from]?.includes(to)) return NEEDS_ADMIN;
  return NEXT[from].includes(to) ? ALLOWED : { allowed: false, reason: 'INVALID_TRANSITION' };
}

/** Whether the items of an order in `status` may be replaced; owner and administrator alike, only while PENDING. */
export function checkItemsEdit(status: OrderStatus): Verdict {
  return status === EDITABLE_STATUS ? ALLOWED : { allowed: false, reason: 'ITEMS_LOCKED' };
}
