import type { UpdateOrderResultResolvers } from '../generated/graphql.js';
import { refusalError, type Refusal } from '../domain/orders.js';
import type { RefusalMember } from '../mappers.js';

/**
 * A refusal as a member of UpdateOrderResult, with the message its error form carries. Refusals the union has no
 * member for (items of an order past PENDING) stay errors.
 */
export function refusalMember(refusal: Refusal): RefusalMember {
  const error = refusalError(refusal);
  switch (refusal.reason) {
    case 'NOT_FOUND':
      return { __typename: 'OrderNotFound', message: error.message, orderId: refusal.orderId };
    case 'FORBIDDEN':
      return { __typename: 'InsufficientPermissions', message: error.message, requiredRole: refusal.requiredRole };
    case 'INVALID_TRANSITION':
      return { __typename: 'InvalidOrderTransition', message: error.message, from: refusal.from, to: refusal.to };
    case 'ITEMS_LOCKED':
      throw error;
  }
}

export const UpdateOrderResult: UpdateOrderResultResolvers = {
  // Stored orders carry `_id`; refusal members carry their `__typename`.
  __resolveType: (result) => ('_id' in result ? 'Order' : result.__typename),
};
