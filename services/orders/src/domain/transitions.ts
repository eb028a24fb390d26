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
 * Whether `actor` may move an order from `from` to `to`. A move in no role's list (one that does not exist, a
 * same-status "move", any move out of a terminal status) is invalid for everyone: refusing it as FORBIDDEN would send
 * the caller to an administrator who could not make it either. FORBIDDEN is for a move that exists but is not the
 * owner's; the caller already reads the order, status included, so naming which moves exist tells them nothing more.
 */
export function checkStatusChange(from: OrderStatus, to: OrderStatus, actor: OrderActor): Verdict {
  if (!NEXT[from].includes(to)) return { allowed: false, reason: 'INVALID_TRANSITION' };
  return actor === 'ADMIN' || OWNER_MOVES[from]?.includes(to) ? ALLOWED : NEEDS_ADMIN;
}

/** Whether the items of an order in `status` may be replaced; owner and administrator alike, only while PENDING. */
export function checkItemsEdit(status: OrderStatus): Verdict {
  return status === EDITABLE_STATUS ? ALLOWED : { allowed: false, reason: 'ITEMS_LOCKED' };
}
