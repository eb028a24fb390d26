// Order rules and every order write: each returns the committed order and announces it, and updates are
// compare-and-set, decided again after a lost race so a move that became invalid fails as such.
import { setTimeout as sleep } from 'node:timers/promises';
import type { GraphQLError } from 'graphql';
import {
  badUserInput,
  conflict,
  declareInvalidation,
  forbidden,
  invalidTransition,
  isSelfOrAdmin,
  localIdOf,
  notFound,
  requireSignedIn,
  toGlobalId,
  type Identity,
  type Viewer,
} from '@ordergraph/core';
import type { Catalog } from '../peers/catalog.js';
import type { OrderEventPublisher } from '../events.js';
import type { LineItemDoc, OrderDoc, OrderStatus, OrderStore } from '../store/orders.js';
import { checkItemsEdit, checkStatusChange, EDITABLE_STATUS } from './transitions.js';

const MAX_ITEMS = 100;
const MAX_QUANTITY = 1000;
/** Compare-and-set attempts before an update gives up with CONFLICT. */
export const MAX_WRITE_ATTEMPTS = 5;

export interface LineItemInput {
  productId: string;
  quantity: number;
}

export interface UpdateInput {
  status?: OrderStatus | null | undefined;
  items?: readonly LineItemInput[] | null | undefined;
}

/** Why an update was refused. Both forms of updateOrder report these: as errors, or as result-union members. */
export type Refusal =
  | { reason: 'NOT_FOUND'; orderId: string }
  | { reason: 'FORBIDDEN'; requiredRole: 'ADMIN' }
  | { reason: 'INVALID_TRANSITION'; from: OrderStatus; to: OrderStatus }
  | { reason: 'ITEMS_LOCKED'; status: OrderStatus };

export type UpdateOutcome = { ok: true; order: OrderDoc } | { ok: false; refusal: Refusal };

/** The GraphQLError of a refusal, for the error form (and the message of the union form). */
export function refusalError(refusal: Refusal): GraphQLError {
  switch (refusal.reason) {
    case 'NOT_FOUND':
      return notFound('Order', refusal.orderId);
    case 'FORBIDDEN':
      return forbidden();
    case 'INVALID_TRANSITION':
      return invalidTransition(refusal.from, refusal.to);
    case 'ITEMS_LOCKED':
      return badUserInput(`Items can only change while an order is ${EDITABLE_STATUS}; this one is ${refusal.status}`, {
        field: 'items',
        status: refusal.status,
      });
  }
}

/**
 * The one decision behind updateOrder, updateOrderResult and cancelOrder: may `viewer` apply `input` to `order` as
 * it is now? Returns null when it may. An order the viewer may not read is refused exactly as a missing one (so the
 * IDs of other users' orders cannot be probed), before its state is looked at. A move that exists but is not the
 * viewer's is FORBIDDEN; one that exists for no role is INVALID_TRANSITION (transitions.ts).
 */
export function decideUpdate(order: OrderDoc | null, orderId: string, input: UpdateInput, viewer: Identity): Refusal | null {
  if (!order || !isSelfOrAdmin(viewer, order.userId)) return { reason: 'NOT_FOUND', orderId };
  const move = input.status ? checkStatusChange(order.status, input.status, viewer.role === 'ADMIN' ? 'ADMIN' : 'OWNER') : undefined;
  if (move && !move.allowed && move.reason === 'FORBIDDEN') return { reason: 'FORBIDDEN', requiredRole: move.requiredRole };
  if (input.items && !checkItemsEdit(order.status).allowed) return { reason: 'ITEMS_LOCKED', status: order.status };
  if (move && !move.allowed && input.status) return { reason: 'INVALID_TRANSITION', from: order.status, to: input.status };
  return null;
}

/**
 * Checks the lines of an order and merges lines of the same product (quantities added), keeping first-seen order.
 * Product IDs come back in their canonical form, so two spellings of one ID merge too.
 */
export function normalizeItems(lines: readonly LineItemInput[]): LineItemInput[] {
  if (lines.length === 0 || lines.length > MAX_ITEMS) {
    throw badUserInput(`An order has 1 to ${MAX_ITEMS} items`, { field: 'items', max: MAX_ITEMS });
  }
  const merged = new Map<string, number>();
  for (const line of lines) {
    const localId = localIdOf('Product', line.productId);
    if (localId === null) {
      throw badUserInput(`${line.productId} is not a product ID`, { field: 'items', productId: line.productId });
    }
    if (!Number.isInteger(line.quantity) || line.quantity < 1 || line.quantity > MAX_QUANTITY) {
      throw badUserInput(`quantity must be between 1 and ${MAX_QUANTITY}`, { field: 'items', productId: line.productId });
    }
    const productId = toGlobalId('Product', localId);
    merged.set(productId, (merged.get(productId) ?? 0) + line.quantity);
  }
  return [...merged].map(([productId, quantity]) => {
    if (quantity > MAX_QUANTITY) {
      throw badUserInput(`The quantities of product ${productId} add up to more than ${MAX_QUANTITY}`, {
        field: 'items',
        productId,
      });
    }
    return { productId, quantity };
  });
}

/**
 * Tells the gateway's entity cache what a committed write changed: the order, and its owner, whose `orders` list holds
 * it (a new order, a changed status or items). Nothing else in this subgraph holds an order.
 */
function invalidate(order: OrderDoc): void {
  declareInvalidation(
    { kind: 'entity', subgraph: 'orders', type: 'Order', key: { id: toGlobalId('Order', order._id) } },
    { kind: 'entity', subgraph: 'orders', type: 'User', key: { id: order.userId } },
  );
}

/** What the order rules act on: the orders collection, the catalog's prices, and where committed writes are announced. */
export interface OrderDomainDeps {
  store: OrderStore;
  catalog: Catalog;
  events: OrderEventPublisher;
}

/** The order rules applied to the store: what resolvers call for every write. */
export function createOrderDomain({ store, catalog, events }: OrderDomainDeps) {
  /** Prices normalized lines at the catalog's current prices: one catalog request per call. */
  async function priceItems(lines: readonly LineItemInput[]): Promise<LineItemDoc[]> {
    const prices = await catalog.currentPriceCents(lines.map((line) => line.productId));
    return lines.map((line, i) => {
      const unitPriceCents = prices[i];
      if (unitPriceCents === null || unitPriceCents === undefined) {
        throw badUserInput(`Product ${line.productId} does not exist`, { field: 'items', productId: line.productId });
      }
      return { productId: line.productId, quantity: line.quantity, unitPriceCents };
    });
  }

  async function update(viewer: Viewer, orderId: string, input: UpdateInput): Promise<UpdateOutcome> {
    const identity = requireSignedIn(viewer);
    if (!input.status && !input.items) throw badUserInput('Pass status, items or both', { field: 'input' });
    const lines = input.items ? normalizeItems(input.items) : undefined;
    const localId = localIdOf('Order', orderId);
    // Priced once, on the first attempt that is allowed to change the items; retries reuse the prices.
    let items: LineItemDoc[] | undefined;
    for (let attempt = 1; ; attempt++) {
      const current = localId === null ? null : await store.findById(localId);
      const refusal = decideUpdate(current, orderId, input, identity);
      if (refusal || !current) return { ok: false, refusal: refusal ?? { reason: 'NOT_FOUND', orderId } };
      if (lines && !items) items = await priceItems(lines);
      const committed = await store.compareAndSet(current, { status: input.status ?? undefined, items });
      if (committed) {
        invalidate(committed);
        if (committed.status !== current.status) events.statusChanged(committed);
        return { ok: true, order: committed };
      }
      if (attempt === MAX_WRITE_ATTEMPTS) break;
      // Jitter, so writers that collided do not collide again in lockstep.
      await sleep(Math.random() * 5 * attempt);
    }
    throw conflict(`Order ${orderId} kept changing; try again`);
  }

  return {
    /** Places an order for the viewer at the catalog's current prices. */
    async create(viewer: Viewer, input: { items: readonly LineItemInput[] }): Promise<OrderDoc> {
      const identity = requireSignedIn(viewer);
      const items = await priceItems(normalizeItems(input.items));
      const order = await store.create({ userId: identity.userId, items });
      invalidate(order);
      events.orderCreated(order);
      return order;
    },
    update,
    cancel: (viewer: Viewer, orderId: string): Promise<UpdateOutcome> => update(viewer, orderId, { status: 'CANCELLED' }),
  };
}

export type OrderDomain = ReturnType<typeof createOrderDomain>;
