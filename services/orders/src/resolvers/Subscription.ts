import { isSelfOrAdmin, requireSignedIn } from '@ordergraph/core';
import type { SubscriptionResolvers } from '../generated/graphql.js';
import { inCommitOrder } from '../events.js';
import type { OrderDoc } from '../store/orders.js';
import { readOrder } from './Order.js';

/** Each event is the order as committed; Order's resolvers read it like a stored one. */
const orderFromEvent = (order: OrderDoc) => order;

// Authorization is checked when a subscription starts and again for every event: a user receives events of the
// orders they may read (their own), an administrator of every order.
export const Subscription: SubscriptionResolvers = {
  orderStatusChanged: {
    async subscribe(_parent, { orderId }, ctx) {
      const order = await readOrder(orderId, ctx);
      return ctx.events.statusChanges(order._id, inCommitOrder(order.version, (event) => isSelfOrAdmin(ctx.viewer, event.userId)));
    },
    resolve: orderFromEvent,
  },
  newOrderCreated: {
    subscribe(_parent, _args, { viewer, events }) {
      requireSignedIn(viewer);
      return events.created((order) => isSelfOrAdmin(viewer, order.userId));
    },
    resolve: orderFromEvent,
  },
};
