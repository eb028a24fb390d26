// Apollo tracing at the gateway: the format, an entry for every resolver and every subgraph fetch, and who may ask
// (everyone in development, ADMIN only in production).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toGlobalId } from '@ordergraph/core';
import { graphql, token } from '@ordergraph/testkit';
import type { ResolverTrace } from '../gateway/src/observability/tracing.js';
import { startSupergraph, type Supergraph } from '@ordergraph/testkit/e2e';

const aliceId = toGlobalId('User', 'user-0001');
const QUERY = `query ($id: ID!) { user(id: $id) { name orders(limit: 2) { id items { quantity product { name } } } } }`;
const traced = { 'x-ordergraph-tracing': '1' };

function expectApolloTracing(tracing: Record<string, unknown> | undefined): ResolverTrace[] {
  expect(tracing).toMatchObject({
    version: 1,
    startTime: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/),
    endTime: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/),
    duration: expect.any(Number),
  });
  const { duration, startTime, endTime } = tracing as { duration: number; startTime: string; endTime: string };
  expect(Date.parse(endTime)).toBeGreaterThanOrEqual(Date.parse(startTime));
  const resolvers = (tracing as { execution: { resolvers: ResolverTrace[] } }).execution.resolvers;
  for (const resolver of resolvers) {
    expect(resolver).toEqual({
      path: expect.any(Array),
      parentType: expect.any(String),
      fieldName: expect.any(String),
      returnType: expect.any(String),
      startOffset: expect.any(Number),
      duration: expect.any(Number),
    });
    // Nanoseconds, within the execution.
    expect(Number.isInteger(resolver.startOffset) && Number.isInteger(resolver.duration)).toBe(true);
    expect(resolver.startOffset + resolver.duration).toBeLessThanOrEqual(duration);
  }
  return resolvers;
}

describe('in development', () => {
  let supergraph: Supergraph;
  let admin: string;
  beforeAll(async () => {
    supergraph = await startSupergraph();
    admin = await token('ADMIN', 'user-0000');
  });
  afterAll(() => supergraph?.stop());

  it('X-Ordergraph-Tracing: 1 returns every resolver and every subgraph fetch in the Apollo tracing format', async () => {
    const { body } = await graphql(supergraph.url, QUERY, { variables: { id: aliceId }, token: admin, headers: traced });
    expect(body.errors).toBeUndefined();
    const resolvers = expectApolloTracing(body.extensions?.['tracing']);
    const paths = resolvers.filter((resolver) => resolver.parentType !== 'Subgraph').map((resolver) => resolver.path.join('.'));
    // One entry per field of the response.
    const orders = body.data!.user.orders as { items: unknown[] }[];
    expect(paths).toEqual(expect.arrayContaining(['user', 'user.name', 'user.orders', 'user.orders.0.id', 'user.orders.0.items.0.product.name']));
    const fields = 3 + orders.reduce((sum, order) => sum + 2 + order.items.length * 3, 0);
    expect(paths).toHaveLength(fields);
    expect(resolvers.find((resolver) => resolver.parentType === 'Query')).toMatchObject({ path: ['user'], fieldName: 'user', returnType: 'User' });

    // The users subgraph answers the root field, orders and catalog resolve entities.
    const fetches = resolvers.filter((resolver) => resolver.parentType === 'Subgraph');
    expect(fetches.map((fetch) => fetch.fieldName).sort()).toEqual(['catalog', 'orders', 'users']);
    expect(fetches.find((fetch) => fetch.fieldName === 'users')).toMatchObject({ path: ['user'], returnType: 'user' });
    expect(fetches.find((fetch) => fetch.fieldName === 'catalog')).toMatchObject({ returnType: '_entities' });
  });

  it('answers X-Apollo-Tracing: 1 too, for anonymous callers, and nothing without the header', async () => {
    const query = `{ product(id: "${toGlobalId('Product', 'product-0005')}") { name } }`;
    const apollo = await graphql(supergraph.url, query, { headers: { 'x-apollo-tracing': '1' } });
    expect(expectApolloTracing(apollo.body.extensions?.['tracing']).map((resolver) => resolver.fieldName)).toEqual(
      expect.arrayContaining(['catalog', 'product', 'name']),
    );
    expect((await graphql(supergraph.url, query)).body.extensions?.['tracing']).toBeUndefined();
    expect((await graphql(supergraph.url, query, { headers: { 'x-ordergraph-tracing': '0' } })).body.extensions?.['tracing']).toBeUndefined();
  });
});

describe('in production', () => {
  const secret = 'tracing-test-secret-of-at-least-32-characters';
  let supergraph: Supergraph;
  beforeAll(async () => {
    supergraph = await startSupergraph({ env: { NODE_ENV: 'production', JWT_SECRET: secret }, redis: true });
  });
  afterAll(() => supergraph?.stop());

  it('traces for ADMIN only', async () => {
    const [admin, alice] = await Promise.all([token('ADMIN', 'user-0000', { secret }), token('USER', 'user-0001', { secret })]);
    const asAdmin = await graphql(supergraph.url, QUERY, { variables: { id: aliceId }, token: admin, headers: traced });
    expectApolloTracing(asAdmin.body.extensions?.['tracing']);
    for (const caller of [alice, undefined]) {
      const response = await graphql(supergraph.url, QUERY, { variables: { id: aliceId }, headers: traced, ...(caller ? { token: caller } : {}) });
      expect(response.body.extensions?.['tracing']).toBeUndefined();
    }
    const asUser = await graphql(supergraph.url, QUERY, { variables: { id: aliceId }, token: alice, headers: { 'x-apollo-tracing': '1' } });
    expect(asUser.body.data!.user.name).toEqual(expect.any(String));
    expect(asUser.body.extensions?.['tracing']).toBeUndefined();
  });
});
