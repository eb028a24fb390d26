// Every query the API offers, as the subgraph that serves it receives it: one or more measured cases per field of
// schemas/api.graphql that a client can ask (root fields, and fields taking arguments), on seed data at any
// SEED_SCALE. test/query-plans.test.ts asserts each is served from an index; scripts/measure-scale.ts times them at size.
import { encodeCursor, toGlobalId } from '@ordergraph/core';
import { seedCounts, seededRandom, seedUserAt, orderLocalId, productLocalId, userLocalId } from '@ordergraph/seed';
import { graphql, token } from './http.js';

export type SubgraphName = 'users' | 'orders' | 'catalog';
type Caller = 'admin' | 'user' | 'anonymous';

/** What a case may read and do: the data set's size, draws, and untimed calls to set things up. */
export interface CaseContext {
  scale: number;
  counts: ReturnType<typeof seedCounts>;
  random(): number;
  /** A random index below `n`. */
  pick(n: number): number;
  call(subgraph: SubgraphName, query: string, variables: Record<string, unknown>, as: Caller): Promise<Record<string, any>>;
}

export interface ApiCase {
  /** The API field measured, `Type.field` as schemas/api.graphql names it. */
  field: string;
  /** What this case asks, for the report. */
  label: string;
  subgraph: SubgraphName;
  query: string;
  as: Caller;
  /** The variables of one request; may set things up first with untimed calls. */
  variables(context: CaseContext): Record<string, unknown> | Promise<Record<string, unknown>>;
}

/**
 * Fields measured through another field's case, with the reason: a subscription's only store read is at subscribe
 * time, the same lookup by ID as `order(id)`.
 */
export const MEASURED_ELSEWHERE: Record<string, string> = {
  'Subscription.orderStatusChanged': 'reads the order by ID at subscribe time, as Query.order does',
  'Subscription.newOrderCreated': 'reads nothing at subscribe time; each event is the order createOrder wrote',
};

const userId = (i: number) => toGlobalId('User', userLocalId(i));
const orderId = (i: number) => toGlobalId('Order', orderLocalId(i));
const productId = (i: number) => toGlobalId('Product', productLocalId(i));
/** An ordinary user (never the administrator). */
const someUser = (c: CaseContext) => 1 + c.pick(c.counts.users - 1);
const deep = (n: number) => Math.max(0, n - 1000);

let unique = 0;
const fresh = (prefix: string) => `${prefix}-${process.pid}-${Date.now().toString(36)}-${(unique++).toString(36)}`;

async function placeOrder(c: CaseContext): Promise<string> {
  const data = await c.call('orders', 'mutation ($input: CreateOrderInput!) { createOrder(input: $input) { id } }', { input: { items: [{ productId: productId(c.pick(c.counts.products)), quantity: 1 }] } }, 'user');
  return (data['createOrder'] as { id: string }).id;
}

const USER_FIELDS = 'id email name role createdAt';
const ORDER_FIELDS = 'id status total createdAt items { quantity unitPrice subtotal product { id } }';
const PRODUCT_FIELDS = 'id name price currentPrice description createdAt';

export const API_CASES: ApiCase[] = [
  // users subgraph
  { field: 'Query.user', label: 'user(id) of a random user', subgraph: 'users', as: 'admin', query: `query ($id: ID!) { user(id: $id) { ${USER_FIELDS} } }`, variables: (c) => ({ id: userId(c.pick(c.counts.users)) }) },
  { field: 'Query.users', label: 'users(limit: 20, offset: random)', subgraph: 'users', as: 'admin', query: `query ($offset: Int) { users(limit: 20, offset: $offset) { ${USER_FIELDS} } }`, variables: (c) => ({ offset: c.pick(c.counts.users) }) },
  { field: 'Query.users', label: 'users(filter: {role: USER}, limit: 20, offset: users - 1000)', subgraph: 'users', as: 'admin', query: `query ($offset: Int) { users(filter: { role: USER }, limit: 20, offset: $offset) { ${USER_FIELDS} } }`, variables: (c) => ({ offset: deep(c.counts.users) }) },
  { field: 'Query.users', label: 'users(filter: {email})', subgraph: 'users', as: 'admin', query: `query ($email: String) { users(filter: { email: $email }) { ${USER_FIELDS} } }`, variables: (c) => ({ email: seedUserAt(someUser(c)).email.toUpperCase() }) },
  { field: 'Query.users', label: 'users(filter: {role: USER, createdAfter: random}, offset: 500)', subgraph: 'users', as: 'admin', query: `query ($after: DateTime) { users(filter: { role: USER, createdAfter: $after }, limit: 20, offset: 500) { ${USER_FIELDS} } }`, variables: (c) => ({ after: seedUserAt(c.pick(c.counts.users)).createdAt.toISOString() }) },
  { field: 'Query.usersConnection', label: 'usersConnection(first: 20, after: random) with totalCount', subgraph: 'users', as: 'admin', query: `query ($after: String) { usersConnection(first: 20, after: $after) { edges { cursor node { id } } pageInfo { hasNextPage hasPreviousPage endCursor } totalCount } }`, variables: (c) => { const i = c.pick(c.counts.users); return { after: encodeCursor({ createdAt: seedUserAt(i).createdAt, id: userLocalId(i) }) }; } },
  { field: 'Query.usersConnection', label: 'usersConnection(filter: {role: USER}, last: 20, before: random)', subgraph: 'users', as: 'admin', query: `query ($before: String) { usersConnection(filter: { role: USER }, last: 20, before: $before) { edges { node { id } } pageInfo { hasNextPage hasPreviousPage } totalCount } }`, variables: (c) => { const i = someUser(c); return { before: encodeCursor({ createdAt: seedUserAt(i).createdAt, id: userLocalId(i) }) }; } },
  { field: 'Query.node', label: 'node(id) of a user', subgraph: 'users', as: 'admin', query: 'query ($id: ID!) { node(id: $id) { __typename id ... on User { name } } }', variables: (c) => ({ id: userId(c.pick(c.counts.users)) }) },
  { field: 'Query.node', label: 'node(id) of an order (asks orders)', subgraph: 'users', as: 'admin', query: 'query ($id: ID!) { node(id: $id) { __typename id } }', variables: (c) => ({ id: orderId(c.pick(c.counts.orders)) }) },
  { field: 'Query.search', label: 'search(query: "Lamp") (users, orders, catalog)', subgraph: 'users', as: 'admin', query: 'query ($q: String!) { search(query: $q) { __typename ... on Product { id } ... on User { id } } }', variables: () => ({ q: 'Lamp' }) },
  { field: 'Query.search', label: 'search(query: "Lovelace")', subgraph: 'users', as: 'admin', query: 'query ($q: String!) { search(query: $q) { __typename ... on User { id name } } }', variables: () => ({ q: 'Lovelace' }) },
  { field: 'Query.search', label: 'search(query: "Ada Lovelace")', subgraph: 'users', as: 'admin', query: 'query ($q: String!) { search(query: $q) { __typename ... on User { id name } } }', variables: () => ({ q: 'Ada Lovelace' }) },
  { field: 'Query.search', label: 'search(query: random email)', subgraph: 'users', as: 'admin', query: 'query ($q: String!) { search(query: $q) { __typename ... on User { id } } }', variables: (c) => ({ q: seedUserAt(someUser(c)).email }) },
  { field: 'Query.search', label: 'search(query: an order ID)', subgraph: 'users', as: 'admin', query: 'query ($q: String!) { search(query: $q) { __typename ... on Order { id } } }', variables: (c) => ({ q: orderId(c.pick(c.counts.orders)) }) },
  { field: 'Mutation.createUser', label: 'createUser (unique email)', subgraph: 'users', as: 'admin', query: 'mutation ($input: CreateUserInput!) { createUser(input: $input) { id } }', variables: () => ({ input: { email: `${fresh('scale')}@example.com`, name: 'Scale Tester' } }) },
  { field: 'Order.user', label: '_entities(User) as Order.user resolves', subgraph: 'users', as: 'admin', query: 'query ($r: [_Any!]!) { _entities(representations: $r) { ... on User { id name } } }', variables: (c) => ({ r: Array.from({ length: 20 }, () => ({ __typename: 'User', id: userId(c.pick(c.counts.users)) })) }) },
  // orders subgraph
  { field: 'Query.order', label: 'order(id) of a random order', subgraph: 'orders', as: 'admin', query: `query ($id: ID!) { order(id: $id) { ${ORDER_FIELDS} } }`, variables: (c) => ({ id: orderId(c.pick(c.counts.orders)) }) },
  { field: 'User.orders', label: 'User.orders(limit: 20) of a random user (_entities)', subgraph: 'orders', as: 'admin', query: `query ($r: [_Any!]!) { _entities(representations: $r) { ... on User { orders(limit: 20) { ${ORDER_FIELDS} } } } }`, variables: (c) => ({ r: [{ __typename: 'User', id: userId(someUser(c)) }] }) },
  { field: 'User.orders', label: 'User.orders(limit: 5, offset: 5) of 20 users in one batch', subgraph: 'orders', as: 'admin', query: 'query ($r: [_Any!]!) { _entities(representations: $r) { ... on User { orders(limit: 5, offset: 5) { id } } } }', variables: (c) => ({ r: Array.from({ length: 20 }, () => ({ __typename: 'User', id: userId(someUser(c)) })) }) },
  { field: 'Mutation.createOrder', label: 'createOrder (3 lines, priced by the catalog)', subgraph: 'orders', as: 'user', query: 'mutation ($input: CreateOrderInput!) { createOrder(input: $input) { id total } }', variables: (c) => ({ input: { items: [0, 1, 2].map(() => ({ productId: productId(c.pick(c.counts.products)), quantity: 1 })) } }) },
  { field: 'Mutation.updateOrder', label: 'updateOrder(status: PROCESSING) of a new order', subgraph: 'orders', as: 'admin', query: 'mutation ($id: ID!) { updateOrder(id: $id, input: { status: PROCESSING }) { id status } }', variables: async (c) => ({ id: await placeOrder(c) }) },
  { field: 'Mutation.updateOrderResult', label: 'updateOrderResult(items) of a new order', subgraph: 'orders', as: 'admin', query: 'mutation ($id: ID!, $items: [LineItemInput!]) { updateOrderResult(id: $id, input: { items: $items }) { __typename ... on Order { id total } } }', variables: async (c) => ({ id: await placeOrder(c), items: [{ productId: productId(c.pick(c.counts.products)), quantity: 2 }] }) },
  { field: 'Mutation.cancelOrder', label: 'cancelOrder of a new order', subgraph: 'orders', as: 'admin', query: 'mutation ($id: ID!) { cancelOrder(id: $id) { id status } }', variables: async (c) => ({ id: await placeOrder(c) }) },
  // catalog subgraph
  { field: 'Query.product', label: 'product(id) of a random product', subgraph: 'catalog', as: 'anonymous', query: `query ($id: ID!) { product(id: $id) { ${PRODUCT_FIELDS} } }`, variables: (c) => ({ id: productId(c.pick(c.counts.products)) }) },
  { field: 'Query.products', label: 'products(limit: 100, offset: random)', subgraph: 'catalog', as: 'anonymous', query: `query ($offset: Int) { products(limit: 100, offset: $offset) { ${PRODUCT_FIELDS} } }`, variables: (c) => ({ offset: c.pick(c.counts.products) }) },
  { field: 'LineItem.product', label: '_entities(Product) x 50 as LineItem.product resolves', subgraph: 'catalog', as: 'anonymous', query: 'query ($r: [_Any!]!) { _entities(representations: $r) { ... on Product { id name currentPrice } } }', variables: (c) => ({ r: Array.from({ length: 50 }, () => ({ __typename: 'Product', id: productId(c.pick(c.counts.products)) })) }) },
  { field: 'Mutation.createProduct', label: 'createProduct', subgraph: 'catalog', as: 'admin', query: 'mutation ($input: CreateProductInput!) { createProduct(input: $input) { id } }', variables: () => ({ input: { name: `Scale ${fresh('widget')}`, price: 9.99 } }) },
  { field: 'Mutation.updateProduct', label: 'updateProduct(price) of a random product', subgraph: 'catalog', as: 'admin', query: 'mutation ($id: ID!, $input: UpdateProductInput!) { updateProduct(id: $id, input: $input) { id price } }', variables: (c) => ({ id: productId(c.pick(c.counts.products)), input: { price: 10 + c.pick(1000) } }) },
];

/** One request of a case against running subgraphs, timed; throws on GraphQL errors. */
export interface CaseRunner {
  run(apiCase: ApiCase): Promise<number>;
  context: CaseContext;
}

export async function caseRunner(urls: Record<SubgraphName, string>, scale: number, seed = 20261129): Promise<CaseRunner> {
  const tokens: Record<Caller, string | undefined> = { admin: await token('ADMIN', userLocalId(0), { expiresIn: '6h' }), user: await token('USER', userLocalId(1), { expiresIn: '6h' }), anonymous: undefined };
  const random = seededRandom(seed);
  const call: CaseContext['call'] = async (subgraph, query, variables, as) => {
    const { body } = await graphql(urls[subgraph], query, { variables, ...(tokens[as] ? { token: tokens[as] } : {}) });
    if (body.errors?.length) throw new Error(`${subgraph}: ${JSON.stringify(body.errors).slice(0, 400)} for ${query.slice(0, 120)}`);
    return body.data as Record<string, any>;
  };
  const context: CaseContext = { scale, counts: seedCounts(scale), random, pick: (n) => Math.floor(random() * n), call };
  return {
    context,
    async run(apiCase) {
      const variables = await apiCase.variables(context);
      const started = performance.now();
      await call(apiCase.subgraph, apiCase.query, variables, apiCase.as);
      return performance.now() - started;
    },
  };
}

/** The value below which `fraction` of the sorted samples lie. */
export function percentile(samples: number[], fraction: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)] ?? 0;
}
