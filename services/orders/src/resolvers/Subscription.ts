import { isSelfOrAdmin, requireSignedIn } from '@ordergraph/common';
import type { SubscriptionResolvers } from '../generated/graphql.js';
import type { OrderDoc } from '../store/orders.js';
import { readOrder } from './Order.js';

/** Each event is the order as committed; Order's resolvers read it like a stored one. */
const asOrder = (order: OrderDoc) => order;

// Authorization is checked when a subscription starts and again for every event: a user receives events of the
// orders they may read (their own), an administrator of every order.
export const Subscription: SubscriptionResolvers = {
  orderStatusChanged: {
    async subscribe(_parent, { orderId }, ctx) {
      const order = await readOrder(orderId, ctx);
      // Versions only grow: an event that reaches this replica after a newer one (published by another replica,
      // say) is dropped, so each subscriber sees an order's changes in commit order.
      let seen = order.version;
      return ctx.events.statusChanges(order._id, (event) => {
        if (event.version <= seen || !isSelfOrAdmin(ctx.viewer, event.userId)) return false;
        seen = event.version;
        return true;
      });
    },
    resolve: asOrder,
  },
  newOrderCreated: {
    subscribe(_parent, _args, { viewer, events }) {
      requireSignedIn(viewer);
      return events.created((order) => isSelfOrAdmin(viewer, order.userId));
    },
    resolve: asOrder,
  },
};
