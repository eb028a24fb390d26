// Both query planners behind our gateway answer alike: the Rust one (the default) and the JavaScript one that
// QUERY_PLANNER=js keeps for one release, on the same subgraphs, including the field errors the gateway completes.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { toGlobalId } from '@ordergraph/core';
import { graphql, token } from '@ordergraph/testkit';
import { startSupergraph, type Supergraph } from '@ordergraph/testkit/e2e';

let rust: Supergraph;
let js: Supergraph;
let admin: string;

beforeAll(async () => {
  [rust, js] = await Promise.all([startSupergraph(), startSupergraph({ gatewayEnv: { QUERY_PLANNER: 'js' } })]);
  admin = await token('ADMIN', 'user-0000');
});
afterAll(async () => {
  await Promise.all([rust?.stop(), js?.stop()]);
});

const NODE = `query ($id: ID!) { node(id: $id) { __typename id ... on Order { status total user { id } } ... on Product { name price } } }`;
const ORDERS = `query ($id: ID!) { user(id: $id) { name orders(limit: 5) { id status total user { name } items { quantity product { name } } } } }`;
const codes = (body: { errors?: readonly { extensions?: Record<string, unknown> }[] }) => body.errors?.map((error) => error.extensions?.['code']);
/** The same operation asked of both planners, as an administrator: the Rust one's answer, then the JavaScript one's. */
const askBoth = (query: string, variables: Record<string, unknown>) => {
  const ask = (supergraph: Supergraph) => graphql(supergraph.url, query, { variables, token: admin });
  return Promise.all([ask(rust), ask(js)]);
};

it.each([
  ['entities across three subgraphs', ORDERS, { id: toGlobalId('User', 'user-0001') }],
  ['a product by node(id)', NODE, { id: toGlobalId('Product', 'product-0003') }],
  ['an unknown order by node(id): null and NOT_FOUND', NODE, { id: toGlobalId('Order', 'nothing') }],
  ['an unknown order by node(id) { __typename id }, asked of its owner', `query ($id: ID!) { node(id: $id) { __typename id } }`, { id: toGlobalId('Order', 'nothing') }],
  ['a malformed ID', NODE, { id: 'garbage!' }],
])('%s', async (_case, query, variables) => {
  const [fromRust, fromJs] = await askBoth(query, variables);
  expect(fromRust.status).toBe(fromJs.status);
  expect(fromRust.body.data).toEqual(fromJs.body.data);
  expect(codes(fromRust.body)).toEqual(codes(fromJs.body));
});

it('answers named and inline fragments over entities of three subgraphs as the JavaScript planner does', async () => {
  const query = `fragment U on User { id name } fragment O on Order { id status total }
    query ($id: ID!) { user(id: $id) { ...U orders(limit: 3) { ...O user { ...U } items { quantity product { ... on Product { name price } } } } } }`;
  const [fromRust, fromJs] = await askBoth(query, { id: toGlobalId('User', 'user-0001') });
  expect(fromRust.body.errors).toBeUndefined();
  const user = (fromRust.body.data as { user: { name: string; orders: { status: string; user: { name: string }; items: { product: { name: string } }[] }[] } }).user;
  expect(user.orders.length).toBeGreaterThan(0);
  expect(user.orders[0]).toMatchObject({ status: expect.any(String), user: { name: user.name } });
  expect(user.orders[0]!.items[0]!.product.name).toEqual(expect.any(String));
  expect(fromRust.body).toEqual(fromJs.body);
});

it('shows the query plan to administrators who ask for it by header, in extensions.queryPlan, and to no one else', async () => {
  const variables = { id: toGlobalId('User', 'user-0001') };
  const planned = await graphql(rust.url, ORDERS, { variables, token: admin, headers: { 'x-ordergraph-query-plan': '1' } });
  expect(planned.body.errors).toBeUndefined();
  const plan = JSON.stringify(planned.body.extensions?.['queryPlan']);
  expect(planned.body.extensions?.['queryPlan']).toMatchObject({ kind: 'QueryPlan' });
  for (const subgraph of ['users', 'orders', 'catalog']) expect(plan).toContain(`"serviceName":"${subgraph}"`);
  // Apollo Router's header works too.
  const apollo = await graphql(rust.url, ORDERS, { variables, token: admin, headers: { 'apollo-expose-query-plan': 'true' } });
  expect(apollo.body.extensions?.['queryPlan']).toEqual(planned.body.extensions?.['queryPlan']);
  const alice = await token('USER', 'user-0001');
  const asUser = await graphql(rust.url, ORDERS, { variables, token: alice, headers: { 'x-ordergraph-query-plan': '1' } });
  expect(asUser.body.errors).toBeUndefined();
  expect(asUser.body.extensions?.['queryPlan']).toBeUndefined();
  const unasked = await graphql(rust.url, ORDERS, { variables, token: admin });
  expect(unasked.body.extensions?.['queryPlan']).toBeUndefined();
});
