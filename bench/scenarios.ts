// The benchmark's three scenarios, each a query every Federation 2 gateway answers identically.
import { toGlobalId } from '@ordergraph/core';

export interface Scenario {
  id: string;
  name: string;
  query: string;
  variables: Record<string, unknown>;
}

export const SCENARIOS: Scenario[] = [
  {
    id: 'a',
    name: 'product(id): one subgraph',
    query: 'query Product($id: ID!) { product(id: $id) { id name currentPrice } }',
    variables: { id: toGlobalId('Product', 'product-0007') },
  },
  {
    id: 'b',
    name: 'a user, 20 orders, their items and products: three subgraphs',
    query:
      'query Orders($id: ID!) { user(id: $id) { name email orders(limit: 20) { id status total createdAt user { name } items { quantity unitPrice subtotal product { name price } } } } }',
    variables: { id: toGlobalId('User', 'user-0001') },
  },
  {
    // The shape of The Guild's federation gateway benchmark: many fields, entities resolved back and forth between
    // subgraphs over several levels (users -> orders -> user -> orders -> items -> products), plus a second root list.
    id: 'c',
    name: 'wide: users, orders, user, orders, items, products, and products',
    query: `fragment U on User { id name email role createdAt }
fragment O on Order { id status total createdAt updatedAt }
fragment P on Product { id name price currentPrice description createdAt }
query Wide {
  users(limit: 7) { ...U orders(limit: 4) { ...O user { ...U orders(limit: 4) { ...O items { quantity unitPrice subtotal product { ...P } } } } } }
  products(limit: 40) { ...P }
}`,
    variables: {},
  },
];
