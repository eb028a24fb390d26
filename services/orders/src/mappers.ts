// The shapes resolvers receive for the GraphQL types that have no document of their own (codegen's mappers).
import type { OrderStatus } from './store/orders.js';

/** An entity another subgraph owns (User, Product): this subgraph knows only its key, the owner resolves the rest. */
export interface EntityReference {
  id: string;
}

/** The members of UpdateOrderResult that report a refusal. */
export interface OrderNotFoundMember {
  __typename: 'OrderNotFound';
  message: string;
  orderId: string;
}

export interface InsufficientPermissionsMember {
  __typename: 'InsufficientPermissions';
  message: string;
  requiredRole: string;
}

export interface InvalidOrderTransitionMember {
  __typename: 'InvalidOrderTransition';
  message: string;
  from: OrderStatus;
  to: OrderStatus;
}

export type RefusalMember = OrderNotFoundMember | InsufficientPermissionsMember | InvalidOrderTransitionMember;
