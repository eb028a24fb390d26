import { scalarResolvers } from '@ordergraph/core';
import type { Resolvers } from '../generated/graphql.js';
import { Mutation } from './Mutation.js';
import { Node, SearchResult } from './Node.js';
import { Query } from './Query.js';
import { User } from './User.js';

export const resolvers: Resolvers = {
  DateTime: scalarResolvers.DateTime,
  Query,
  Mutation,
  User,
  Node,
  SearchResult,
};
