import type { MutationResolvers } from '../generated/graphql.js';
import { refusalError, type UpdateOutcome } from '../domain/orders.js';
import { refusalMember } from './UpdateOrderResult.js';

/** The error form: a refusal becomes its GraphQLError. */
function orderOrThrow(outcome: UpdateOutcome) {
  if (!outcome.ok) throw refusalError(outcome.refusal);
  return outcome.order;
}

export const Mutation: MutationResolvers = {
  createOrder: (_parent, { input }, { viewer, orders }) => orders.create(viewer, input),

  updateOrder: async (_parent, { id, input }, { viewer, orders }) => orderOrThrow(await orders.update(viewer, id, input)),

  async updateOrderResult(_parent, { id, input }, { viewer, orders }) {
    const outcome = await orders.update(viewer, id, input);
    return outcome.ok ? outcome.order : refusalMember(outcome.refusal);
  },

  cancelOrder: async (_parent, { id }, { viewer, orders }) => orderOrThrow(await orders.cancel(viewer, id)),
};
