// Both query planners behind our gateway answer alike: the Rust one (the default) and the JavaScript one that
// QUERY_PLANNER=js keeps for one release, on the same subgraphs, including the field errors the gateway completes.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { toGlobalId } from '@ordergraph/common';
import { graphql, token } from '@ordergraph/testkit';
import { startSupergraph, type Supergraph } from './harness.js';

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

it.each([
  ['entities across three subgraphs', ORDERS, { id: toGlobalId('User', 'user-0001') }],
  ['a product by node(id)', NODE, { id: toGlobalId('Product', 'product-0003') }],
  ['an unknown order by node(id): null and NOT_FOUND', NODE, { id: toGlobalId('Order', 'nothing') }],
  ['a malformed ID', NODE, { id: 'garbage!' }],
])('%s', async (_case, query, variables) => {
  const ask = (supergraph: Supergraph) => graphql(supergraph.url, query, { variables, token: admin });
  const [fromRust, fromJs] = await Promise.all([ask(rust), ask(js)]);
  expect(fromRust.status).toBe(fromJs.status);
  expect(fromRust.body.data).toEqual(fromJs.body.data);
  expect(codes(fromRust.body)).toEqual(codes(fromJs.body));
});
