// The subgraphs' @authenticated and @requiresScopes, enforced twice: by the gateway before any subgraph is called (a
// refused field is null with its error, the rest of the answer stays), and by the subgraph itself when called directly.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toGlobalId } from '@ordergraph/core';
import { graphql, readCounter, stream, token, wsClient } from '@ordergraph/testkit';
import { startSupergraph, type Supergraph } from '@ordergraph/testkit/e2e';

const aliceId = toGlobalId('User', 'user-0001');
const productId = toGlobalId('Product', 'product-0001');
const orderId = toGlobalId('Order', 'order-0001');

describe.each(['rust', 'js'])('authorization directives at the gateway (QUERY_PLANNER=%s)', (planner) => {
  let supergraph: Supergraph;
  let alice: string;
  let admin: string;
  beforeAll(async () => {
    supergraph = await startSupergraph({ gatewayEnv: { QUERY_PLANNER: planner } });
    alice = await token('USER', 'user-0001');
    admin = await token('ADMIN', 'user-0000');
  });
  afterAll(() => supergraph?.stop());

  /**
   * GraphQL requests one subgraph has received so far, once the count holds still: a subgraph records a request as its
   * response ends, which may be just after the client read it.
   */
  const requestsTo = async (name: string) => {
    const read = () => readCounter(supergraph.subgraphUrl(name).replace('/graphql', '/metrics'), 'graphql_request_duration_seconds_count');
    for (let last = await read(); ; ) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      const now = await read();
      if (now === last) return now;
      last = now;
    }
  };

  it('anonymous: a field that needs a signed-in caller is null with UNAUTHENTICATED, the catalog still answers, orders is never asked', async () => {
    const before = await requestsTo('orders');
    const { status, body } = await graphql(supergraph.url, `query ($o: ID!, $p: ID!) { order(id: $o) { id total } product(id: $p) { id name } }`, {
      variables: { o: orderId, p: productId },
    });
    expect(status).toBe(200);
    expect(body.data).toEqual({ order: null, product: { id: productId, name: expect.any(String) } });
    expect(body.errors).toEqual([
      { message: 'Authentication required', locations: [{ line: 1, column: 28 }], path: ['order'], extensions: { code: 'UNAUTHENTICATED' } },
    ]);
    expect(await requestsTo('orders')).toBe(before);
  });

  it('a USER asking an administrators-only field gets FORBIDDEN for it (a non-null root: data null) and users is never asked', async () => {
    const before = await requestsTo('users');
    const { status, body } = await graphql(supergraph.url, `{ users { id } }`, { token: alice });
    expect(status).toBe(200);
    expect(body.data).toBeNull();
    expect(body.errors).toEqual([expect.objectContaining({ message: 'Not authorized', path: ['users'], extensions: { code: 'FORBIDDEN' } })]);
    expect(await requestsTo('users')).toBe(before);
  });

  it('a USER keeps what they may see next to the refused field', async () => {
    const { body } = await graphql(supergraph.url, `query ($id: ID!) { me: user(id: $id) { id email } products(limit: 1) { id } usersConnection(first: 1) { totalCount } }`, {
      variables: { id: aliceId },
      token: alice,
    });
    // usersConnection is non-null, so its refusal nulls the whole answer, as graphql-js executes; the error is the gateway's.
    expect(body.data).toBeNull();
    expect(body.errors).toEqual([expect.objectContaining({ path: ['usersConnection'], extensions: { code: 'FORBIDDEN' } })]);
    const allowed = await graphql(supergraph.url, `query ($id: ID!) { me: user(id: $id) { id email } products(limit: 1) { id } }`, {
      variables: { id: aliceId },
      token: alice,
    });
    expect(allowed.body.errors).toBeUndefined();
    expect(allowed.body.data).toEqual({ me: { id: aliceId, email: expect.any(String) }, products: [{ id: expect.any(String) }] });
  });

  it('a mutation that needs the admin scope is refused for a USER before the catalog is asked, and nothing is created', async () => {
    const before = await requestsTo('catalog');
    const { body } = await graphql(supergraph.url, `mutation { createProduct(input: { name: "Refused", price: 1 }) { id } }`, { token: alice });
    expect(body.data).toBeNull();
    expect(body.errors).toEqual([expect.objectContaining({ message: 'Not authorized', path: ['createProduct'], extensions: { code: 'FORBIDDEN' } })]);
    expect(await requestsTo('catalog')).toBe(before);
  });

  it('an administrator holds the admin scope', async () => {
    const { body } = await graphql(supergraph.url, `{ users(limit: 2) { id email } usersConnection(first: 1) { totalCount } }`, { token: admin });
    expect(body.errors).toBeUndefined();
    expect(body.data!['users']).toHaveLength(2);
  });

  it('a document an administrator was allowed is checked again for a USER and for anonymous callers, and stays allowed for administrators', async () => {
    // The gateway remembers which documents a scope set passed (the checks are skipped for it next time): that memory
    // must never carry over to callers of other scopes, on either planner. The users subgraph would refuse them too:
    // that the gateway did is seen in it never being asked.
    const query = `query SameText { users(limit: 1) { id } usersConnection(first: 1) { totalCount } }`;
    for (let round = 0; round < 2; round++) {
      const asAdmin = await graphql(supergraph.url, query, { token: admin });
      expect(asAdmin.body.errors).toBeUndefined();
      expect(asAdmin.body.data!['users']).toHaveLength(1);
      const before = await requestsTo('users');
      const asUser = await graphql(supergraph.url, query, { token: alice });
      expect(asUser.body.data).toBeNull();
      expect(asUser.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ path: ['users'], extensions: { code: 'FORBIDDEN' } })]));
      const anonymous = await graphql(supergraph.url, query);
      expect(anonymous.body.data).toBeNull();
      expect(anonymous.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ path: ['users'], extensions: { code: 'UNAUTHENTICATED' } })]));
      expect(await requestsTo('users')).toBe(before);
    }
  });

  it('a document with @include is checked for each request: the variables decide which fields it asks', async () => {
    const query = `query Conditional($all: Boolean!) { products(limit: 1) { id } users(limit: 1) @include(if: $all) { id } }`;
    const without = await graphql(supergraph.url, query, { token: alice, variables: { all: false } });
    expect(without.body.errors).toBeUndefined();
    expect(without.body.data).toEqual({ products: [{ id: expect.any(String) }] });
    const withUsers = await graphql(supergraph.url, query, { token: alice, variables: { all: true } });
    expect(withUsers.body.data).toBeNull();
    expect(withUsers.body.errors).toEqual([expect.objectContaining({ path: ['users'], extensions: { code: 'FORBIDDEN' } })]);
  });

  it('anonymous subscriptions are refused with UNAUTHENTICATED and open nothing upstream', async () => {
    const before = await requestsTo('orders');
    const client = wsClient(supergraph.url);
    try {
      const events = stream(client.iterate({ query: `subscription { newOrderCreated { id } }` }));
      expect(await events.ended).toBeUndefined();
      expect(events.results).toEqual([
        { data: { newOrderCreated: null }, errors: [expect.objectContaining({ path: ['newOrderCreated'], extensions: { code: 'UNAUTHENTICATED' } })] },
      ]);
    } finally {
      await client.dispose();
    }
    expect(await requestsTo('orders')).toBe(before);
  });
});

describe('the subgraphs keep their own checks', () => {
  let supergraph: Supergraph;
  beforeAll(async () => {
    supergraph = await startSupergraph();
  });
  afterAll(() => supergraph?.stop());

  it('refuses, when called directly, what the gateway would have refused', async () => {
    const alice = await token('USER', 'user-0001');
    const users = await graphql(supergraph.subgraphUrl('users'), `{ users { id } }`, { token: alice });
    expect(users.body.errors).toEqual([expect.objectContaining({ path: ['users'], extensions: expect.objectContaining({ code: 'FORBIDDEN' }) })]);
    const product = await graphql(supergraph.subgraphUrl('catalog'), `mutation { createProduct(input: { name: "Refused", price: 1 }) { id } }`, { token: alice });
    expect(product.body.errors).toEqual([expect.objectContaining({ extensions: expect.objectContaining({ code: 'FORBIDDEN' }) })]);
    const order = await graphql(supergraph.subgraphUrl('orders'), `query ($id: ID!) { order(id: $id) { id } }`, { variables: { id: orderId } });
    expect(order.body.errors).toEqual([expect.objectContaining({ path: ['order'], extensions: expect.objectContaining({ code: 'UNAUTHENTICATED' }) })]);
  });
});
