import { scalarResolvers } from '@ordergraph/core';
import type { Resolvers } from '../generated/graphql.js';
import { LineItem } from './LineItem.js';
import { Mutation } from './Mutation.js';
import { Order } from './Order.js';
import { Query } from './Query.js';
import { Subscription } from './Subscription.js';
import { UpdateOrderResult } from './UpdateOrderResult.js';
import { User } from './User.js';

export const resolvers: Resolvers = {
  DateTime: scalarResolvers.DateTime,
  Query,
  Mutation,
  Subscription,
  Order,
  LineItem,
  User,
  UpdateOrderResult,
};
