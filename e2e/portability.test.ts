// Portability: the supergraph we compose is plain Federation 2. Served by @apollo/gateway against the same running
// subgraphs, it answers the end-to-end queries exactly as our Hive Gateway does: data, null propagation and errors.
// (Subscriptions are left out: @apollo/gateway has none. Edge concerns of our gateway, such as refusing an invalid
// token with 401 before execution, are not part of the supergraph and are not compared.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toGlobalId } from '@ordergraph/core';
import { UPDATE_ORDER_RESULT, graphql, token, type GraphQLResponse } from '@ordergraph/testkit';
import { startApolloGateway } from '@ordergraph/testkit/e2e';
import { startSupergraph, type Supergraph } from '@ordergraph/testkit/e2e';

type Caller = 'admin' | 'alice' | 'bob' | 'anonymous';

let supergraph: Supergraph;
let apollo: { url: string; stop(): Promise<void> };
const tokens: Partial<Record<Caller, string>> = {};
let orderId: string;
const aliceId = toGlobalId('User', 'user-0001');
const productId = (n: number) => toGlobalId('Product', `product-${String(n).padStart(4, '0')}`);

beforeAll(async () => {
  supergraph = await startSupergraph();
  apollo = await startApolloGateway(supergraph.sdl);
  [tokens.admin, tokens.alice, tokens.bob] = await Promise.all([token('ADMIN', 'user-0000'), token('USER', 'user-0001'), token('USER', 'user-0002')]);
  const created = await graphql(supergraph.url, `mutation ($input: CreateOrderInput!) { createOrder(input: $input) { id } }`, {
    variables: { input: { items: [{ productId: productId(5), quantity: 2 }, { productId: productId(6), quantity: 1 }] } },
    token: tokens.alice!,
  });
  orderId = created.body.data!.createOrder.id;
});
afterAll(async () => {
  await apollo?.stop();
  await supergraph?.stop();
});

/**
 * Errors in a stable order (gateways may report sibling field errors in either order), without the subgraph name
 * @apollo/gateway adds to extensions: which subgraph failed is the gateway's business, not the API's (ours strips it).
 */
function normalize({ status, body }: GraphQLResponse) {
  const errors =
    body.errors &&
    [...body.errors]
      // Locations differ by design: ours refuses an @authenticated/@requiresScopes field at the edge, with the document
      // position; @apollo/gateway enforces neither directive and relays the subgraph's own refusal, which has none.
      .map(({ locations: _locations, ...error }) => {
        const { serviceName: _serviceName, ...extensions } = error.extensions ?? {};
        return { ...error, extensions };
      })
      .sort((a, b) => JSON.stringify([a.path, a.message]).localeCompare(JSON.stringify([b.path, b.message])));
  return { status, body: { ...body, ...(errors ? { errors } : {}) } };
}

async function both(query: string, as: Caller, variables: () => Record<string, unknown> = () => ({})) {
  const options = { variables: variables(), ...(tokens[as] ? { token: tokens[as] } : {}) };
  const [ours, theirs] = await Promise.all([graphql(supergraph.url, query, options), graphql(apollo.url, query, options)]);
  return { ours: normalize(ours), theirs: normalize(theirs) };
}

const SEARCH = `query ($q: String!) { search(query: $q) { __typename ... on User { id userName: name email } ... on Order { id status total } ... on Product { id name price } } }`;
const NODE = `query ($id: ID!) { node(id: $id) { __typename id ... on User { userName: name } ... on Order { status total user { id name } } ... on Product { name currentPrice } } }`;

/** Each case says what it must produce behind our gateway (`data` without errors, or an error code), so that a
 * comparison of two identical failures cannot pass unnoticed. */
const cases: [name: string, query: string, as: Caller, expected: 'data' | string, variables?: () => Record<string, unknown>][] = [
  // Queries and cross-subgraph fields.
  ['a user, their orders (orders subgraph) and each order back to its user (users subgraph)', `query ($id: ID!) { user(id: $id) { id name email createdAt orders(limit: 5) { id status total user { id name } items { quantity unitPrice subtotal product { id name currentPrice } } } } }`, 'alice', 'data', () => ({ id: aliceId })],
  ['users and usersConnection', `{ users(limit: 3, offset: 2) { id email role } usersConnection(first: 3) { totalCount edges { cursor node { id name } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }`, 'admin', 'data'],
  ['an order with its line items and products', `query ($id: ID!) { order(id: $id) { id status total user { id email } items { quantity unitPrice subtotal product { id name price } } } }`, 'alice', 'data', () => ({ id: orderId })],
  ['products, public', `{ products(limit: 5, offset: 3) { id name price currentPrice description createdAt } product(id: "${productId(7)}") { id name } }`, 'anonymous', 'data'],
  // node and search.
  ['node for a user', NODE, 'alice', 'data', () => ({ id: aliceId })],
  ['node for an order', NODE, 'alice', 'data', () => ({ id: orderId })],
  ['node for a product', NODE, 'anonymous', 'data', () => ({ id: productId(8) })],
  ['node for a malformed ID', NODE, 'admin', 'NOT_FOUND', () => ({ id: 'garbage!' })],
  ['node for an unknown type', NODE, 'admin', 'NOT_FOUND', () => ({ id: toGlobalId('Invoice', '1') })],
  ['search for products', SEARCH, 'anonymous', 'data', () => ({ q: 'lamp' })],
  ['search for users, as an admin', SEARCH, 'admin', 'data', () => ({ q: 'user4' })],
  ['search for an order by ID, as its owner', SEARCH, 'alice', 'data', () => ({ q: orderId })],
  ['search for an order by ID, as someone else', SEARCH, 'bob', 'data', () => ({ q: orderId })],
  // Errors and null propagation.
  ['NOT_FOUND with resource and id', `query ($id: ID!) { order(id: $id) { id } }`, 'admin', 'NOT_FOUND', () => ({ id: toGlobalId('Order', 'nope') })],
  ['NOT_FOUND on another user\'s order, as on a missing one', `query ($id: ID!) { order(id: $id) { id status } }`, 'bob', 'NOT_FOUND', () => ({ id: orderId })],
  ['node(id) { __typename id } of another user\'s order, asked of its owner', `query ($id: ID!) { node(id: $id) { __typename id } }`, 'bob', 'NOT_FOUND', () => ({ id: orderId })],
  ['node(id) { __typename id } of a missing order, asked of its owner', `query ($id: ID!) { node(id: $id) { __typename id } }`, 'admin', 'NOT_FOUND', () => ({ id: toGlobalId('Order', 'nope') })],
  ['UNAUTHENTICATED next to public data', `query ($u: ID!) { product(id: "${productId(2)}") { name } user(id: $u) { name } }`, 'anonymous', 'UNAUTHENTICATED', () => ({ u: aliceId })],
  ['a failed non-null field nulls its nearest nullable parent', `query ($id: ID!) { user(id: $id) { id orders(limit: 101) { id } } product(id: "${productId(1)}") { id } }`, 'alice', 'BAD_USER_INPUT', () => ({ id: aliceId })],
  ['a failed non-null root field nulls data', `{ users { id } }`, 'alice', 'FORBIDDEN'],
  ['a validation error', `{ product(id: "x") { color } }`, 'anonymous', 'GRAPHQL_VALIDATION_FAILED'],
  ['another user, answered as a missing one', `query ($id: ID!) { user(id: $id) { id email } }`, 'bob', 'NOT_FOUND', () => ({ id: aliceId })],
  // Mutations' error shapes (none of them changes anything).
  ['createUser as a USER', `mutation { createUser(input: { email: "x@example.com", name: "X" }) { id } }`, 'alice', 'FORBIDDEN'],
  ['createUser with a taken email', `mutation { createUser(input: { email: "user1@example.com", name: "Dup" }) { id } }`, 'admin', 'EMAIL_TAKEN'],
  ['createOrder with an unknown product', `mutation ($p: ID!) { createOrder(input: { items: [{ productId: $p, quantity: 1 }] }) { id } }`, 'alice', 'BAD_USER_INPUT', () => ({ p: toGlobalId('Product', 'ghost') })],
  ['createOrder anonymously', `mutation ($p: ID!) { createOrder(input: { items: [{ productId: $p, quantity: 1 }] }) { id } }`, 'anonymous', 'UNAUTHENTICATED', () => ({ p: productId(1) })],
  ['updateOrder with a move outside the state machine', `mutation ($id: ID!) { updateOrder(id: $id, input: { status: DELIVERED }) { id status } }`, 'admin', 'INVALID_TRANSITION', () => ({ id: orderId })],
  ['updateOrder by the owner beyond their rights', `mutation ($id: ID!) { updateOrder(id: $id, input: { status: PROCESSING }) { id status } }`, 'alice', 'FORBIDDEN', () => ({ id: orderId })],
  ['cancelOrder by another user', `mutation ($id: ID!) { cancelOrder(id: $id) { id status } }`, 'bob', 'NOT_FOUND', () => ({ id: orderId })],
  ['updateOrderResult: InsufficientPermissions', UPDATE_ORDER_RESULT, 'alice', 'data', () => ({ id: orderId, input: { status: 'PROCESSING' } })],
  ['updateOrderResult by another user: OrderNotFound', UPDATE_ORDER_RESULT, 'bob', 'data', () => ({ id: orderId, input: { status: 'PROCESSING' } })],
  ['updateOrderResult: OrderNotFound', UPDATE_ORDER_RESULT, 'admin', 'data', () => ({ id: toGlobalId('Order', 'missing'), input: { status: 'PROCESSING' } })],
  ['updateOrderResult: InvalidOrderTransition', UPDATE_ORDER_RESULT, 'admin', 'data', () => ({ id: orderId, input: { status: 'DELIVERED' } })],
  ['createProduct as a USER', `mutation { createProduct(input: { name: "Nope", price: 1 }) { id } }`, 'alice', 'FORBIDDEN'],
];

describe('the supergraph behind @apollo/gateway answers as behind our gateway', () => {
  it.each(cases)('%s', async (_name, query, as, expected, variables) => {
    const { ours, theirs } = await both(query, as, variables);
    if (expected === 'data') expect(ours.body.errors).toBeUndefined();
    else expect(ours.body.errors?.map((error) => error.extensions?.['code'])).toContain(expected);
    expect(theirs).toEqual(ours);
  });
});
