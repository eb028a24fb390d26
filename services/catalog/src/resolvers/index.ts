import { scalarResolvers } from '@ordergraph/core';
import type { Resolvers } from '../generated/graphql.js';
import { Mutation } from './Mutation.js';
import { Product } from './Product.js';
import { Query } from './Query.js';

export const resolvers: Resolvers = {
  ...scalarResolvers,
  Query,
  Mutation,
  Product,
};
