import type { GraphQLResolveInfo, GraphQLScalarType, GraphQLScalarTypeConfig } from 'graphql';
import type { OrderDoc, LineItemDoc } from '../store/orders.js';
import type { EntityReference, OrderNotFoundMember, InsufficientPermissionsMember, InvalidOrderTransitionMember } from '../mappers.js';
import type { Context } from '../context.js';
export type Maybe<T> = T | null;
export type InputMaybe<T> = Maybe<T>;
export type RequireFields<T, K extends keyof T> = Omit<T, K> & { [P in K]-?: NonNullable<T[P]> };
/** All built-in and custom scalars, mapped to their actual values */
export type Scalars = {
  ID: { input: string; output: string; }
  String: { input: string; output: string; }
  Boolean: { input: boolean; output: boolean; }
  Int: { input: number; output: number; }
  Float: { input: number; output: number; }
  /** An RFC 3339 timestamp in UTC with milliseconds, for example 2026-11-21T17:36:00.000Z. */
  DateTime: { input: Date; output: Date; }
  _FieldSet: { input: unknown; output: unknown; }
};

/** Whether a cached response may be shared (PUBLIC) or only kept for one viewer (PRIVATE). */
export type CacheControlScope =
  | 'PRIVATE'
  | 'PUBLIC';

export type CreateOrderInput = {
  /** 1 to 100 lines. Prices come from the catalog. */
  items: Array<LineItemInput>;
};

export type InsufficientPermissions = {
  __typename?: 'InsufficientPermissions';
  message: Scalars['String']['output'];
  /** The role the change needs. */
  requiredRole: Scalars['String']['output'];
};

export type InvalidOrderTransition = {
  __typename?: 'InvalidOrderTransition';
  from: OrderStatus;
  message: Scalars['String']['output'];
  to: OrderStatus;
};

export type LineItem = {
  __typename?: 'LineItem';
  /**
   * The product ordered. Null only when the catalog could not be reached (slow past its timeout, or down); an error
   * in `errors` at this field's path says why, and the rest of the order is intact.
   */
  product?: Maybe<Product>;
  /** 1 to 1000. */
  quantity: Scalars['Int']['output'];
  /** unitPrice times quantity. */
  subtotal: Scalars['Float']['output'];
  /** The catalog's price of the product when it was ordered (or when the items were last changed). */
  unitPrice: Scalars['Float']['output'];
};

export type LineItemInput = {
  /** The product's global ID. */
  productId: Scalars['ID']['input'];
  /** 1 to 1000. Lines of the same product are merged and their quantities added. */
  quantity: Scalars['Int']['input'];
};

export type Mutation = {
  __typename?: 'Mutation';
  /** Moves an order to CANCELLED: the owner while PENDING, administrators while PENDING or PROCESSING. */
  cancelOrder: Order;
  /** Places an order for the signed-in user, priced from the catalog. */
  createOrder: Order;
  /** Changes an order's status and/or items; failures are errors (NOT_FOUND, FORBIDDEN, INVALID_TRANSITION, CONFLICT). */
  updateOrder: Order;
  /** Like updateOrder, with expected failures returned as members of the result union. */
  updateOrderResult: UpdateOrderResult;
};


export type MutationCancelOrderArgs = {
  id: Scalars['ID']['input'];
};


export type MutationCreateOrderArgs = {
  input: CreateOrderInput;
};


export type MutationUpdateOrderArgs = {
  id: Scalars['ID']['input'];
  input: UpdateOrderInput;
};


export type MutationUpdateOrderResultArgs = {
  id: Scalars['ID']['input'];
  input: UpdateOrderInput;
};

/** An object with a global ID, fetchable with Query.node. */
export type Node = {
  /** An opaque global ID. */
  id: Scalars['ID']['output'];
};

/** Visible to the user who placed it and to administrators. */
export type Order = Node & {
  __typename?: 'Order';
  createdAt: Scalars['DateTime']['output'];
  id: Scalars['ID']['output'];
  items: Array<LineItem>;
  status: OrderStatus;
  /** The sum of the items' subtotals. */
  total: Scalars['Float']['output'];
  /** When the order last changed (status or items). */
  updatedAt: Scalars['DateTime']['output'];
  /** The user who placed the order. */
  user: User;
};

export type OrderNotFound = {
  __typename?: 'OrderNotFound';
  message: Scalars['String']['output'];
  orderId: Scalars['ID']['output'];
};

/** Where an order is in its life: PENDING -> PROCESSING -> SHIPPED -> DELIVERED, or CANCELLED from PENDING or PROCESSING. */
export type OrderStatus =
  /** Final. */
  | 'CANCELLED'
  /** Final. */
  | 'DELIVERED'
  /** Placed; the owner may still change its items or cancel it. */
  | 'PENDING'
  | 'PROCESSING'
  | 'SHIPPED';

export type Product = {
  __typename?: 'Product';
  id: Scalars['ID']['output'];
};

export type Query = {
  __typename?: 'Query';
  /** Internal: the order whose global ID is the query, if the caller may read it (search fan-out). */
  _searchOrders: Array<SearchHit>;
  /** An order by its global ID; null when the ID is malformed or unknown. Signed-in callers only. */
  order?: Maybe<Order>;
};


export type Query_SearchOrdersArgs = {
  limit: Scalars['Int']['input'];
  query: Scalars['String']['input'];
};


export type QueryOrderArgs = {
  id: Scalars['ID']['input'];
};

/** An internal search match: a global ID and its relevance. */
export type SearchHit = {
  __typename?: 'SearchHit';
  id: Scalars['ID']['output'];
  score: Scalars['Float']['output'];
};

/**
 * Real-time order events, over graphql-ws or Server-Sent Events. Delivery is at most once, in commit order per order;
 * each event carries the order's updatedAt, so clients can order and deduplicate.
 */
export type Subscription = {
  __typename?: 'Subscription';
  /** Each order as it is placed: a user's own orders, or every order for an administrator. */
  newOrderCreated: Order;
  /**
   * The order each time its status changes (updateOrder, updateOrderResult, cancelOrder). The order's owner or an
   * administrator; NOT_FOUND for an unknown order.
   */
  orderStatusChanged: Order;
};


/**
 * Real-time order events, over graphql-ws or Server-Sent Events. Delivery is at most once, in commit order per order;
 * each event carries the order's updatedAt, so clients can order and deduplicate.
 */
export type SubscriptionOrderStatusChangedArgs = {
  orderId: Scalars['ID']['input'];
};

/** At least one of status and items. */
export type UpdateOrderInput = {
  /** Replaces every item, priced anew from the catalog; only while the order is PENDING. */
  items?: InputMaybe<Array<LineItemInput>>;
  /** The status to move to; the move must be allowed for the order's current status and the caller's role. */
  status?: InputMaybe<OrderStatus>;
};

export type UpdateOrderResult = InsufficientPermissions | InvalidOrderTransition | Order | OrderNotFound;

export type User = {
  __typename?: 'User';
  id: Scalars['ID']['output'];
  /** The user's orders, newest first; limit 0..100. */
  orders: Array<Order>;
};


export type UserOrdersArgs = {
  limit?: InputMaybe<Scalars['Int']['input']>;
  offset?: InputMaybe<Scalars['Int']['input']>;
};

export type WithIndex<TObject> = TObject & Record<string, any>;
export type ResolversObject<TObject> = WithIndex<TObject>;

export type ResolverTypeWrapper<T> = Promise<T> | T;

export type ReferenceResolver<TResult, TReference, TContext> = (
      reference: TReference,
      context: TContext,
      info: GraphQLResolveInfo
    ) => Promise<TResult> | TResult;

      type ScalarCheck<T, S> = S extends true ? T : NullableCheck<T, S>;
      type NullableCheck<T, S> = Maybe<T> extends T ? Maybe<ListCheck<NonNullable<T>, S>> : ListCheck<T, S>;
      type ListCheck<T, S> = T extends (infer U)[] ? NullableCheck<U, S>[] : GraphQLRecursivePick<T, S>;
      export type GraphQLRecursivePick<T, S> = { [K in keyof T & keyof S]: ScalarCheck<T[K], S[K]> };
    

export type ResolverWithResolve<TResult, TParent, TContext, TArgs> = {
  resolve: ResolverFn<TResult, TParent, TContext, TArgs>;
};
export type Resolver<TResult, TParent = Record<PropertyKey, never>, TContext = Record<PropertyKey, never>, TArgs = Record<PropertyKey, never>> = ResolverFn<TResult, TParent, TContext, TArgs> | ResolverWithResolve<TResult, TParent, TContext, TArgs>;

export type ResolverFn<TResult, TParent, TContext, TArgs> = (
  parent: TParent,
  args: TArgs,
  context: TContext,
  info: GraphQLResolveInfo
) => Promise<TResult> | TResult;

export type SubscriptionSubscribeFn<TResult, TParent, TContext, TArgs> = (
  parent: TParent,
  args: TArgs,
  context: TContext,
  info: GraphQLResolveInfo
) => AsyncIterable<TResult> | Promise<AsyncIterable<TResult>>;

export type SubscriptionResolveFn<TResult, TParent, TContext, TArgs> = (
  parent: TParent,
  args: TArgs,
  context: TContext,
  info: GraphQLResolveInfo
) => TResult | Promise<TResult>;

export interface SubscriptionSubscriberObject<TResult, TKey extends string, TParent, TContext, TArgs> {
  subscribe: SubscriptionSubscribeFn<{ [key in TKey]: TResult }, TParent, TContext, TArgs>;
  resolve?: SubscriptionResolveFn<TResult, { [key in TKey]: TResult }, TContext, TArgs>;
}

export interface SubscriptionResolverObject<TResult, TParent, TContext, TArgs> {
  subscribe: SubscriptionSubscribeFn<any, TParent, TContext, TArgs>;
  resolve: SubscriptionResolveFn<TResult, any, TContext, TArgs>;
}

export type SubscriptionObject<TResult, TKey extends string, TParent, TContext, TArgs> =
  | SubscriptionSubscriberObject<TResult, TKey, TParent, TContext, TArgs>
  | SubscriptionResolverObject<TResult, TParent, TContext, TArgs>;

export type SubscriptionResolver<TResult, TKey extends string, TParent = Record<PropertyKey, never>, TContext = Record<PropertyKey, never>, TArgs = Record<PropertyKey, never>> =
  | ((...args: any[]) => SubscriptionObject<TResult, TKey, TParent, TContext, TArgs>)
  | SubscriptionObject<TResult, TKey, TParent, TContext, TArgs>;

export type TypeResolveFn<TTypes, TParent = Record<PropertyKey, never>, TContext = Record<PropertyKey, never>> = (
  parent: TParent,
  context: TContext,
  info: GraphQLResolveInfo
) => Maybe<TTypes> | Promise<Maybe<TTypes>>;

export type IsTypeOfResolverFn<T = Record<PropertyKey, never>, TContext = Record<PropertyKey, never>> = (obj: T, context: TContext, info: GraphQLResolveInfo) => boolean | Promise<boolean>;

export type NextResolverFn<T> = () => Promise<T>;

export type DirectiveResolverFn<TResult = Record<PropertyKey, never>, TParent = Record<PropertyKey, never>, TContext = Record<PropertyKey, never>, TArgs = Record<PropertyKey, never>> = (
  next: NextResolverFn<TResult>,
  parent: TParent,
  args: TArgs,
  context: TContext,
  info: GraphQLResolveInfo
) => TResult | Promise<TResult>;

/** Mapping of federation types */
export type FederationTypes = ResolversObject<{
  Order: Order;
  User: User;
}>;

/** Mapping of federation reference types */
export type FederationReferenceTypes = ResolversObject<{
  Order:
    ( { __typename: 'Order' }
    & GraphQLRecursivePick<FederationTypes['Order'], {"id":true}> );
  User:
    ( { __typename: 'User' }
    & GraphQLRecursivePick<FederationTypes['User'], {"id":true}> );
}>;

/** Mapping of union types */
export type ResolversUnionTypes<_RefType extends Record<string, unknown>> = ResolversObject<{
  UpdateOrderResult:
    | ( InsufficientPermissionsMember )
    | ( InvalidOrderTransitionMember )
    | ( OrderDoc )
    | ( OrderNotFoundMember )
  ;
}>;

/** Mapping of interface types */
export type ResolversInterfaceTypes<_RefType extends Record<string, unknown>> = ResolversObject<{
  Node: ( OrderDoc );
}>;

/** Mapping between all available schema types and the resolvers types */
export type ResolversTypes = ResolversObject<{
  CacheControlScope: CacheControlScope;
  CreateOrderInput: CreateOrderInput;
  DateTime: ResolverTypeWrapper<Scalars['DateTime']['output']>;
  InsufficientPermissions: ResolverTypeWrapper<InsufficientPermissionsMember>;
  String: ResolverTypeWrapper<Scalars['String']['output']>;
  InvalidOrderTransition: ResolverTypeWrapper<InvalidOrderTransitionMember>;
  LineItem: ResolverTypeWrapper<LineItemDoc>;
  Float: ResolverTypeWrapper<Scalars['Float']['output']>;
  LineItemInput: LineItemInput;
  ID: ResolverTypeWrapper<Scalars['ID']['output']>;
  Mutation: ResolverTypeWrapper<Record<PropertyKey, never>>;
  Node: ResolverTypeWrapper<ResolversInterfaceTypes<ResolversTypes>['Node']>;
  Order: ResolverTypeWrapper<OrderDoc>;
  OrderNotFound: ResolverTypeWrapper<OrderNotFoundMember>;
  OrderStatus: OrderStatus;
  Product: ResolverTypeWrapper<EntityReference>;
  Query: ResolverTypeWrapper<Record<PropertyKey, never>>;
  SearchHit: ResolverTypeWrapper<SearchHit>;
  Subscription: ResolverTypeWrapper<Record<PropertyKey, never>>;
  UpdateOrderInput: UpdateOrderInput;
  UpdateOrderResult: ResolverTypeWrapper<ResolversUnionTypes<ResolversTypes>['UpdateOrderResult']>;
  User: ResolverTypeWrapper<EntityReference>;
  Boolean: ResolverTypeWrapper<Scalars['Boolean']['output']>;
  Int: ResolverTypeWrapper<Scalars['Int']['output']>;
}>;

/** Mapping between all available schema types and the resolvers parents */
export type ResolversParentTypes = ResolversObject<{
  CreateOrderInput: CreateOrderInput;
  DateTime: Scalars['DateTime']['output'];
  InsufficientPermissions: InsufficientPermissionsMember;
  String: Scalars['String']['output'];
  InvalidOrderTransition: InvalidOrderTransitionMember;
  LineItem: LineItemDoc;
  Float: Scalars['Float']['output'];
  LineItemInput: LineItemInput;
  ID: Scalars['ID']['output'];
  Mutation: Record<PropertyKey, never>;
  Node: ResolversInterfaceTypes<ResolversParentTypes>['Node'];
  Order: OrderDoc;
  OrderNotFound: OrderNotFoundMember;
  Product: EntityReference;
  Query: Record<PropertyKey, never>;
  SearchHit: SearchHit;
  Subscription: Record<PropertyKey, never>;
  UpdateOrderInput: UpdateOrderInput;
  UpdateOrderResult: ResolversUnionTypes<ResolversParentTypes>['UpdateOrderResult'];
  User: EntityReference;
  Boolean: Scalars['Boolean']['output'];
  Int: Scalars['Int']['output'];
}>;

export type CacheControlDirectiveArgs = {
  inheritMaxAge?: Maybe<Scalars['Boolean']['input']>;
  maxAge?: Maybe<Scalars['Int']['input']>;
  scope?: Maybe<CacheControlScope>;
};

export type CacheControlDirectiveResolver<Result, Parent, ContextType = Context, Args = CacheControlDirectiveArgs> = DirectiveResolverFn<Result, Parent, ContextType, Args>;

export interface DateTimeScalarConfig extends GraphQLScalarTypeConfig<ResolversTypes['DateTime'], any> {
  name: 'DateTime';
}

export type InsufficientPermissionsResolvers<ContextType = Context, ParentType extends ResolversParentTypes['InsufficientPermissions'] = ResolversParentTypes['InsufficientPermissions']> = ResolversObject<{
  message?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  requiredRole?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  __isTypeOf?: IsTypeOfResolverFn<ParentType, ContextType>;
}>;

export type InvalidOrderTransitionResolvers<ContextType = Context, ParentType extends ResolversParentTypes['InvalidOrderTransition'] = ResolversParentTypes['InvalidOrderTransition']> = ResolversObject<{
  from?: Resolver<ResolversTypes['OrderStatus'], ParentType, ContextType>;
  message?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  to?: Resolver<ResolversTypes['OrderStatus'], ParentType, ContextType>;
  __isTypeOf?: IsTypeOfResolverFn<ParentType, ContextType>;
}>;

export type LineItemResolvers<ContextType = Context, ParentType extends ResolversParentTypes['LineItem'] = ResolversParentTypes['LineItem']> = ResolversObject<{
  product?: Resolver<Maybe<ResolversTypes['Product']>, ParentType, ContextType>;
  quantity?: Resolver<ResolversTypes['Int'], ParentType, ContextType>;
  subtotal?: Resolver<ResolversTypes['Float'], ParentType, ContextType>;
  unitPrice?: Resolver<ResolversTypes['Float'], ParentType, ContextType>;
}>;

export type MutationResolvers<ContextType = Context, ParentType extends ResolversParentTypes['Mutation'] = ResolversParentTypes['Mutation']> = ResolversObject<{
  cancelOrder?: Resolver<ResolversTypes['Order'], ParentType, ContextType, RequireFields<MutationCancelOrderArgs, 'id'>>;
  createOrder?: Resolver<ResolversTypes['Order'], ParentType, ContextType, RequireFields<MutationCreateOrderArgs, 'input'>>;
  updateOrder?: Resolver<ResolversTypes['Order'], ParentType, ContextType, RequireFields<MutationUpdateOrderArgs, 'id' | 'input'>>;
  updateOrderResult?: Resolver<ResolversTypes['UpdateOrderResult'], ParentType, ContextType, RequireFields<MutationUpdateOrderResultArgs, 'id' | 'input'>>;
}>;

export type NodeResolvers<ContextType = Context, ParentType extends ResolversParentTypes['Node'] = ResolversParentTypes['Node']> = ResolversObject<{
  __resolveType: TypeResolveFn<'Order', ParentType, ContextType>;
}>;

export type OrderResolvers<ContextType = Context, ParentType extends ResolversParentTypes['Order'] = ResolversParentTypes['Order'], FederationReferenceType extends FederationReferenceTypes['Order'] = FederationReferenceTypes['Order']> = ResolversObject<{
  __resolveReference?: ReferenceResolver<Maybe<ResolversTypes['Order']> | FederationReferenceType, FederationReferenceType, ContextType>;
  createdAt?: Resolver<ResolversTypes['DateTime'], ParentType, ContextType>;
  id?: Resolver<ResolversTypes['ID'], ParentType, ContextType>;
  items?: Resolver<Array<ResolversTypes['LineItem']>, ParentType, ContextType>;
  status?: Resolver<ResolversTypes['OrderStatus'], ParentType, ContextType>;
  total?: Resolver<ResolversTypes['Float'], ParentType, ContextType>;
  updatedAt?: Resolver<ResolversTypes['DateTime'], ParentType, ContextType>;
  user?: Resolver<ResolversTypes['User'], ParentType, ContextType>;
  __isTypeOf?: IsTypeOfResolverFn<ParentType, ContextType>;
}>;

export type OrderNotFoundResolvers<ContextType = Context, ParentType extends ResolversParentTypes['OrderNotFound'] = ResolversParentTypes['OrderNotFound']> = ResolversObject<{
  message?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  orderId?: Resolver<ResolversTypes['ID'], ParentType, ContextType>;
  __isTypeOf?: IsTypeOfResolverFn<ParentType, ContextType>;
}>;

export type ProductResolvers<ContextType = Context, ParentType extends ResolversParentTypes['Product'] = ResolversParentTypes['Product']> = ResolversObject<{
  id?: Resolver<ResolversTypes['ID'], ParentType, ContextType>;
}>;

export type QueryResolvers<ContextType = Context, ParentType extends ResolversParentTypes['Query'] = ResolversParentTypes['Query']> = ResolversObject<{
  _searchOrders?: Resolver<Array<ResolversTypes['SearchHit']>, ParentType, ContextType, RequireFields<Query_SearchOrdersArgs, 'limit' | 'query'>>;
  order?: Resolver<Maybe<ResolversTypes['Order']>, ParentType, ContextType, RequireFields<QueryOrderArgs, 'id'>>;
}>;

export type SearchHitResolvers<ContextType = Context, ParentType extends ResolversParentTypes['SearchHit'] = ResolversParentTypes['SearchHit']> = ResolversObject<{
  id?: Resolver<ResolversTypes['ID'], ParentType, ContextType>;
  score?: Resolver<ResolversTypes['Float'], ParentType, ContextType>;
}>;

export type SubscriptionResolvers<ContextType = Context, ParentType extends ResolversParentTypes['Subscription'] = ResolversParentTypes['Subscription']> = ResolversObject<{
  newOrderCreated?: SubscriptionResolver<ResolversTypes['Order'], "newOrderCreated", ParentType, ContextType>;
  orderStatusChanged?: SubscriptionResolver<ResolversTypes['Order'], "orderStatusChanged", ParentType, ContextType, RequireFields<SubscriptionOrderStatusChangedArgs, 'orderId'>>;
}>;

export type UpdateOrderResultResolvers<ContextType = Context, ParentType extends ResolversParentTypes['UpdateOrderResult'] = ResolversParentTypes['UpdateOrderResult']> = ResolversObject<{
  __resolveType: TypeResolveFn<'InsufficientPermissions' | 'InvalidOrderTransition' | 'Order' | 'OrderNotFound', ParentType, ContextType>;
}>;

export type UserResolvers<ContextType = Context, ParentType extends ResolversParentTypes['User'] = ResolversParentTypes['User'], FederationReferenceType extends FederationReferenceTypes['User'] = FederationReferenceTypes['User']> = ResolversObject<{
  __resolveReference?: ReferenceResolver<Maybe<ResolversTypes['User']> | FederationReferenceType, FederationReferenceType, ContextType>;
  id?: Resolver<ResolversTypes['ID'], ParentType, ContextType>;
  orders?: Resolver<Array<ResolversTypes['Order']>, ParentType, ContextType, RequireFields<UserOrdersArgs, 'limit' | 'offset'>>;
}>;

export type Resolvers<ContextType = Context> = ResolversObject<{
  DateTime?: GraphQLScalarType;
  InsufficientPermissions?: InsufficientPermissionsResolvers<ContextType>;
  InvalidOrderTransition?: InvalidOrderTransitionResolvers<ContextType>;
  LineItem?: LineItemResolvers<ContextType>;
  Mutation?: MutationResolvers<ContextType>;
  Node?: NodeResolvers<ContextType>;
  Order?: OrderResolvers<ContextType>;
  OrderNotFound?: OrderNotFoundResolvers<ContextType>;
  Product?: ProductResolvers<ContextType>;
  Query?: QueryResolvers<ContextType>;
  SearchHit?: SearchHitResolvers<ContextType>;
  Subscription?: SubscriptionResolvers<ContextType>;
  UpdateOrderResult?: UpdateOrderResultResolvers<ContextType>;
  User?: UserResolvers<ContextType>;
}>;

export type DirectiveResolvers<ContextType = Context> = ResolversObject<{
  cacheControl?: CacheControlDirectiveResolver<any, any, ContextType>;
}>;
