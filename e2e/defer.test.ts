// @defer and @stream through the gateway over real HTTP: answered in multipart/mixed parts on both planners, in the
// format the Accept header prefers (deferSpec=20220824 or the current incrementalSpec=v0.2), read by Apollo Client 4's
// own handlers for each, with deferred fields from other subgraphs, limits, authorization and tracing as for any other
// operation; mutations too, their write done once; a client that cannot read parts is refused before anything is
// fetched.
import { ApolloClient, HttpLink, InMemoryCache, NetworkStatus, gql } from '@apollo/client';
import { Defer20220824Handler, GraphQL17Alpha9Handler } from '@apollo/client/incremental';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toGlobalId } from '@ordergraph/core';
import { assembled, graphql, partsOf, stream, token, withoutRequestIds, wsClient, type Part } from '@ordergraph/testkit';
import { startSupergraph, type Supergraph } from '@ordergraph/testkit/e2e';

const orderId = toGlobalId('Order', 'order-0001');
const productId = toGlobalId('Product', 'product-0001');
const aliceId = toGlobalId('User', 'user-0001');
/** What Apollo Client 4's HttpLink sends for an operation with @defer (its Defer20220824Handler). */
const DEFER_ACCEPT = 'multipart/mixed;deferSpec=20220824,application/graphql-response+json,application/json;q=0.9';

interface Answer {
  status: number;
  contentType: string | null;
  /** Each part of a multipart answer; a JSON answer as its one part. */
  parts: Part[];
}

/** POSTs an operation and reads every part of its answer. */
async function post(url: string, query: string, options: { token?: string; accept?: string; variables?: Record<string, unknown>; headers?: Record<string, string> } = {}): Promise<Answer> {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: options.accept ?? DEFER_ACCEPT,
      ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
      ...options.headers,
    },
    body: JSON.stringify({ query, variables: options.variables }),
  });
  const contentType = response.headers.get('content-type');
  // Every error of every part names the request, as a single answer's do (checked, then removed).
  const parts = partsOf(contentType, await response.text()).map((part) => ({
    ...withoutRequestIds(part, response.headers),
    ...(part.incremental ? { incremental: part.incremental.map((entry) => withoutRequestIds(entry, response.headers)) } : {}),
    ...(part.completed ? { completed: part.completed.map((entry) => withoutRequestIds(entry, response.headers)) } : {}),
  }));
  return { status: response.status, contentType, parts };
}

/** Watches a query through Apollo Client 4 with an incremental handler, until its last part is in (network status ready). */
async function watched(url: string, token: string, handler: Defer20220824Handler | GraphQL17Alpha9Handler, query: string, variables: Record<string, unknown>) {
  const client = new ApolloClient({ link: new HttpLink({ uri: url, headers: { authorization: `Bearer ${token}` } }), cache: new InMemoryCache(), incrementalHandler: handler });
  const seen: { dataState: string; networkStatus: NetworkStatus; data: any }[] = [];
  try {
    await new Promise<void>((resolve, reject) => {
      const subscription = client.watchQuery({ query: gql(query), variables }).subscribe({
        next: (result) => {
          // The cache adds __typename where the query did not ask for it.
          seen.push({ dataState: result.dataState, networkStatus: result.networkStatus, data: JSON.parse(JSON.stringify(result.data ?? null, (key, value) => (key === '__typename' ? undefined : value))) });
          if (result.error || result.networkStatus === NetworkStatus.ready) {
            subscription.unsubscribe();
            if (result.error) reject(result.error);
            else resolve();
          }
        },
        error: reject,
      });
    });
  } finally {
    client.stop();
  }
  return seen;
}

describe.each(['rust', 'js'])('@defer (QUERY_PLANNER=%s)', (planner) => {
  let supergraph: Supergraph;
  let admin: string;
  let alice: string;
  beforeAll(async () => {
    supergraph = await startSupergraph({ gatewayEnv: { QUERY_PLANNER: planner } });
    admin = await token('ADMIN', 'user-0000');
    alice = await token('USER', 'user-0001');
  });
  afterAll(() => supergraph?.stop());

  it('answers in parts: the initial payload with hasNext, the deferred fields of other subgraphs under `incremental` at their path, then hasNext false', async () => {
    const answer = await post(
      supergraph.url,
      `query ($id: ID!) { order(id: $id) { id status ... @defer { user { name } items { product { name } } } } }`,
      { token: admin, variables: { id: orderId } },
    );
    expect(answer.status).toBe(200);
    expect(answer.contentType).toMatch(/^multipart\/mixed; ?boundary=/);
    const [initial, ...later] = answer.parts;
    expect(initial).toEqual({ data: { order: { id: orderId, status: expect.any(String) } }, hasNext: true });
    expect(later.at(-1)!.hasNext).toBe(false);
    const incremental = later.flatMap((part) => part.incremental ?? []);
    // user.name comes from users, product.name from catalog: neither is orders', the subgraph the order is from.
    expect(incremental).toEqual([
      { path: ['order'], data: { user: { name: expect.any(String) }, items: expect.arrayContaining([{ product: { name: expect.any(String) } }]) } },
    ]);
  });

  it("defers another subgraph's list under an entity: a user's orders, with their products", async () => {
    const answer = await post(
      supergraph.url,
      `query ($id: ID!) { user(id: $id) { id name ... @defer(label: "orders") { orders(limit: 2) { id items { product { name } } } } } }`,
      { token: alice, variables: { id: aliceId } },
    );
    expect(answer.parts[0]).toEqual({ data: { user: { id: aliceId, name: expect.any(String) } }, hasNext: true });
    const incremental = answer.parts.slice(1).flatMap((part) => part.incremental ?? []);
    expect(incremental).toHaveLength(1);
    expect(incremental[0]).toMatchObject({ path: ['user'], label: 'orders' });
    expect(incremental[0]!.data!['orders']).toHaveLength(2);
    expect(incremental[0]!.data!['orders'][0].items[0].product.name).toEqual(expect.any(String));
  });

  it.each([
    ['Defer20220824Handler', () => new Defer20220824Handler()],
    ['GraphQL17Alpha9Handler (the current format)', () => new GraphQL17Alpha9Handler()],
  ])('is read by Apollo Client 4 with its %s: first the order, then its deferred fields merged in', async (_name, handler) => {
    const query = `query DeferredOrder($id: ID!) { order(id: $id) { id status ... @defer { user { id name } items { product { id name } } } } }`;
    const seen = await watched(supergraph.url, admin, handler(), query, { id: orderId });
    const streaming = seen.find((result) => result.dataState === 'streaming');
    expect(streaming?.data).toEqual({ order: { id: orderId, status: expect.any(String) } });
    const whole = await graphql(supergraph.url, query.replace(' @defer', ''), { token: admin, variables: { id: orderId } });
    expect(seen.at(-1)!.data).toEqual(whole.body.data);
  });

  it('answers in parts over graphql-ws too: each part a `next` message', async () => {
    const client = wsClient(supergraph.url, { token: admin });
    try {
      const parts = stream(client.iterate({ query: `query ($id: ID!) { order(id: $id) { id ... @defer { user { name } } } }`, variables: { id: orderId } }));
      expect(await parts.ended).toBeUndefined();
      expect(parts.results).toEqual([
        { data: { order: { id: orderId } }, hasNext: true },
        { incremental: [{ path: ['order'], data: { user: { name: expect.any(String) } } }], hasNext: false },
      ]);
    } finally {
      await client.dispose();
    }
  });

  it('answers a deferred query of cacheable fields in parts every time, never from the response cache, with Cache-Control: no-store', async () => {
    const query = `query ($id: ID!) { product(id: $id) { id ... @defer { name } } }`;
    for (let i = 0; i < 2; i++) {
      const response = await fetch(supergraph.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: DEFER_ACCEPT },
        body: JSON.stringify({ query, variables: { id: productId } }),
      });
      expect(response.headers.get('content-type')).toMatch(/^multipart\/mixed/);
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect(response.headers.get('age')).toBeNull();
      expect(await response.text()).toContain('"incremental"');
    }
  });

  it('holds a deferred operation to the depth limit: 400 DEPTH_LIMIT_EXCEEDED, nothing fetched', async () => {
    const before = await supergraph.subgraphRequests();
    const answer = await post(
      supergraph.url,
      `query ($id: ID!) { user(id: $id) { id ... @defer { orders { user { orders { user { orders { items { product { name } } } } } } } } } }`,
      { token: alice, variables: { id: aliceId } },
    );
    expect(answer.status).toBe(400);
    expect(answer.parts[0]!.errors).toEqual([expect.objectContaining({ extensions: expect.objectContaining({ code: 'DEPTH_LIMIT_EXCEEDED' }) })]);
    expect(await supergraph.subgraphRequests()).toBe(before);
    // Within the limit, the same deferred fragment is answered in parts.
    const within = await post(supergraph.url, `query ($id: ID!) { user(id: $id) { id ... @defer { orders(limit: 1) { items { product { name } } } } } }`, {
      token: alice,
      variables: { id: aliceId },
    });
    expect(within.status).toBe(200);
    expect(within.parts.at(-1)).toMatchObject({ hasNext: false, incremental: [{ path: ['user'] }] });
  });

  it('refuses a field the caller may not see inside a deferred fragment: null with UNAUTHENTICATED in the part that delivers it, the rest stays', async () => {
    const answer = await post(supergraph.url, `query ($p: ID!, $o: ID!) { product(id: $p) { id } ... @defer { products(limit: 1) { id } order(id: $o) { id } } }`, {
      variables: { p: productId, o: orderId },
    });
    expect(answer.status).toBe(200);
    expect(answer.parts[0]).toEqual({ data: { product: { id: productId } }, hasNext: true });
    const incremental = answer.parts.slice(1).flatMap((part) => part.incremental ?? []);
    expect(incremental).toEqual([
      {
        path: [],
        data: { products: [{ id: expect.any(String) }], order: null },
        errors: [expect.objectContaining({ message: 'Authentication required', path: ['order'], extensions: expect.objectContaining({ code: 'UNAUTHENTICATED' }) })],
      },
    ]);
  });

  it('refuses, before anything is fetched, a deferred operation from a client that does not accept parts (406 NOT_ACCEPTABLE)', async () => {
    const before = await supergraph.subgraphRequests();
    for (const accept of ['application/json', 'application/graphql-response+json', 'multipart/mixed;incrementalSpec=v0.3']) {
      const answer = await post(supergraph.url, `query ($id: ID!) { order(id: $id) { id ... @defer { total } } }`, { token: admin, accept, variables: { id: orderId } });
      expect(answer.status).toBe(406);
      expect(answer.parts[0]!.errors).toEqual([expect.objectContaining({ extensions: expect.objectContaining({ code: 'NOT_ACCEPTABLE' }) })]);
      expect(answer.parts[0]!.errors![0]!.message).toContain('multipart/mixed;deferSpec=20220824');
    }
    expect(await supergraph.subgraphRequests()).toBe(before);
    // @defer(if: false) defers nothing: the whole answer, as JSON.
    const whole = await graphql(supergraph.url, `query ($id: ID!) { order(id: $id) { id ... @defer(if: false) { total } } }`, { token: admin, variables: { id: orderId } });
    expect(whole.status).toBe(200);
    expect(whole.body.data).toEqual({ order: { id: orderId, total: expect.any(Number) } });
  });

  it("answers a deferred query in deferSpec parts even when the Accept also names Apollo's subscriptionSpec, which stays for subscriptions", async () => {
    const answer = await post(supergraph.url, `query ($id: ID!) { order(id: $id) { id ... @defer { total } } }`, {
      token: admin,
      accept: 'multipart/mixed;boundary="graphql";subscriptionSpec=1.0, multipart/mixed;deferSpec=20220824, application/json',
      variables: { id: orderId },
    });
    expect(answer.status).toBe(200);
    expect(answer.contentType).not.toContain('subscriptionSpec');
    expect(answer.parts[0]).toEqual({ data: { order: { id: orderId } }, hasNext: true });
    expect(answer.parts.flatMap((part) => part.incremental ?? [])).toEqual([{ path: ['order'], data: { total: expect.any(Number) } }]);
    const subscription = await post(supergraph.url, `subscription { newOrderCreated { id } }`, { token: admin, accept: 'multipart/mixed;deferSpec=20220824' });
    expect(subscription.status).toBe(406);
  });

  it('traces a deferred operation: extensions.tracing and extensions.cost with the last part, covering the deferred fields', async () => {
    const answer = await post(supergraph.url, `query ($id: ID!) { order(id: $id) { id ... @defer { user { name } } } }`, {
      token: admin,
      variables: { id: orderId },
      headers: { 'x-ordergraph-tracing': '1' },
    });
    expect(answer.parts[0]!.extensions).toBeUndefined();
    const last = answer.parts.at(-1)!;
    expect(last.hasNext).toBe(false);
    // order 1 + id 1 + user 1 + name 1, estimated and as it came back.
    expect(last.extensions?.['cost']).toEqual({ estimated: 4, max: 5000, actual: 4 });
    const resolvers = last.extensions?.['tracing'].execution.resolvers as { path: (string | number)[]; parentType: string; fieldName: string }[];
    expect(resolvers).toEqual(expect.arrayContaining([expect.objectContaining({ path: ['order', 'user', 'name'], fieldName: 'name' })]));
    expect(resolvers).toEqual(expect.arrayContaining([expect.objectContaining({ parentType: 'Subgraph', fieldName: 'users' })]));
  });

  it('answers in the current format (incrementalSpec=v0.2) when the Accept prefers it: pending with the first part, delivered by id, completed', async () => {
    const answer = await post(supergraph.url, `query ($id: ID!) { order(id: $id) { id ... @defer(label: "who") { user { name } } } }`, {
      token: admin,
      accept: 'multipart/mixed;incrementalSpec=v0.2,application/graphql-response+json,application/json;q=0.9',
      variables: { id: orderId },
    });
    expect(answer.status).toBe(200);
    expect(answer.contentType).toMatch(/^multipart\/mixed; ?boundary=.*incrementalSpec=v0\.2/);
    expect(answer.parts[0]).toEqual({ data: { order: { id: orderId } }, pending: [{ id: '0', path: ['order'], label: 'who' }], hasNext: true });
    expect(answer.parts.slice(1)).toEqual([{ incremental: [{ id: '0', data: { user: { name: expect.any(String) } } }], completed: [{ id: '0' }], hasNext: false }]);
  });

  it.each([
    ['20220824', DEFER_ACCEPT],
    ['v0.2', 'multipart/mixed;incrementalSpec=v0.2,application/json;q=0.9'],
  ])('streams a list (@stream) in the %s format: its first items at once, the others later, the whole list in the end', async (_format, accept) => {
    const query = `query ($id: ID!) { order(id: $id) { id items @stream(initialCount: 1) { quantity product { id name } } } }`;
    const before = await supergraph.subgraphRequests();
    const answer = await post(supergraph.url, query, { token: admin, accept, variables: { id: orderId } });
    // The subgraphs are asked as for the whole list (none serves @stream): orders once, catalog once for the products.
    expect(await supergraph.subgraphRequests()).toBeLessThanOrEqual(before + 2);
    expect(answer.status).toBe(200);
    expect(answer.parts[0]!.data!['order'].items).toHaveLength(1);
    expect(answer.parts.length).toBeGreaterThan(1);
    const whole = await graphql(supergraph.url, query.replace(' @stream(initialCount: 1)', ''), { token: admin, variables: { id: orderId } });
    expect(whole.body.data!['order'].items.length).toBeGreaterThan(1);
    expect(assembled(answer.parts)).toEqual({ data: whole.body.data, errors: [] });
  });

  it.each([
    ['Defer20220824Handler', () => new Defer20220824Handler()],
    ['GraphQL17Alpha9Handler', () => new GraphQL17Alpha9Handler()],
  ])('streams a root list read by Apollo Client 4 with its %s, to the same list as a whole answer', async (_name, handler) => {
    const query = `query Streamed { products(limit: 5) @stream(initialCount: 2) { id name price } }`;
    const seen = await watched(supergraph.url, admin, handler(), query, {});
    const whole = await graphql(supergraph.url, query.replace(' @stream(initialCount: 2)', ''), { token: admin });
    expect(whole.body.data!['products']).toHaveLength(5);
    expect(seen.at(-1)!.data).toEqual(whole.body.data);
    // Before the end, Apollo Client showed the list as streaming, with fewer items.
    expect(seen.some((result) => result.networkStatus === NetworkStatus.streaming && result.data?.products?.length < 5)).toBe(true);
  });

  /** Places an order as Alice, at the catalog's prices: one she may cancel (PENDING). */
  async function placedOrder(): Promise<string> {
    const placed = await graphql(supergraph.url, 'mutation ($items: [LineItemInput!]!) { createOrder(input: { items: $items }) { id } }', {
      token: alice,
      variables: { items: [{ productId, quantity: 1 }] },
    });
    expect(placed.body.errors).toBeUndefined();
    return placed.body.data!['createOrder'].id as string;
  }
  const orderWrites = () => supergraph.storeCalls('orders', { collection: 'orders', operation: 'findOneAndUpdate' });
  const statusOf = async (id: string) => (await graphql(supergraph.url, 'query ($id: ID!) { order(id: $id) { status } }', { token: alice, variables: { id } })).body.data!['order'].status;

  it.each([
    ['20220824', DEFER_ACCEPT],
    ['v0.2', 'multipart/mixed;incrementalSpec=v0.2,application/json;q=0.9'],
  ])("answers a mutation in parts (%s): the write done once, before the first part, the returned order's deferred fields later", async (_format, accept) => {
    const id = await placedOrder();
    const [requests, writes] = [await supergraph.subgraphRequests(), await orderWrites()];
    const answer = await post(supergraph.url, 'mutation ($id: ID!) { cancelOrder(id: $id) { id ... @defer { status user { name } } } }', { token: alice, accept, variables: { id } });
    expect(answer.status).toBe(200);
    expect(answer.contentType).toMatch(/^multipart\/mixed; ?boundary=/);
    expect(answer.parts[0]).toMatchObject({ data: { cancelOrder: { id } }, hasNext: true });
    expect(answer.parts.at(-1)!.hasNext).toBe(false);
    // A second execution would have failed (CANCELLED to CANCELLED is no transition): no error anywhere.
    expect(assembled(answer.parts)).toEqual({ data: { cancelOrder: { id, status: 'CANCELLED', user: { name: expect.any(String) } } }, errors: [] });
    expect(answer.parts.slice(1).flatMap((part) => part.incremental ?? []).map((entry) => entry.data)).toEqual([{ status: 'CANCELLED', user: { name: expect.any(String) } }]);
    // orders once for the mutation and twice for the deferred fragment (the status; the user's key), users once.
    expect(await supergraph.subgraphRequests()).toBe(requests + 4);
    expect(await orderWrites()).toBe(writes + 1);
    expect(await statusOf(id)).toBe('CANCELLED');
  });

  it.each([
    ['Defer20220824Handler', () => new Defer20220824Handler()],
    ['GraphQL17Alpha9Handler', () => new GraphQL17Alpha9Handler()],
  ])("is read by Apollo Client 4's mutate with its %s: the cancelled order, its deferred fields merged in", async (_name, handler) => {
    const id = await placedOrder();
    const client = new ApolloClient({ link: new HttpLink({ uri: supergraph.url, headers: { authorization: `Bearer ${alice}` } }), cache: new InMemoryCache(), incrementalHandler: handler() });
    try {
      const result = await client.mutate({ mutation: gql('mutation Cancel($id: ID!) { cancelOrder(id: $id) { id ... @defer { status user { name } } } }'), variables: { id } });
      expect(result.data).toEqual({ cancelOrder: { __typename: 'Order', id, status: 'CANCELLED', user: { __typename: 'User', name: expect.any(String) } } });
    } finally {
      client.stop();
    }
  });

  it.each([
    ['20220824', DEFER_ACCEPT],
    ['v0.2', 'multipart/mixed;incrementalSpec=v0.2,application/json;q=0.9'],
  ])('answers, with the object that holds it, a fragment deferred where no key fetches it again (%s): a line item, a result union; the rest in parts', async (_format, accept) => {
    // LineItem and UpdateOrderResult are no entities: the JavaScript planner had nothing to fetch these fragments by,
    // and the mutation's whole answer was an internal error (Order.items null), the union's fields null.
    const id = await placedOrder();
    const writes = await orderWrites();
    const answer = await post(
      supergraph.url,
      'mutation ($id: ID!) { cancelOrder(id: $id) { id items { ... @defer { quantity unitPrice } } ... @defer { status user { name } } } }',
      { token: alice, accept, variables: { id } },
    );
    expect(answer.status).toBe(200);
    expect(answer.parts[0]).toMatchObject({ data: { cancelOrder: { id, items: [{ quantity: 1, unitPrice: expect.any(Number) }] } }, hasNext: true });
    expect(assembled(answer.parts)).toEqual({
      data: { cancelOrder: { id, items: [{ quantity: 1, unitPrice: expect.any(Number) }], status: 'CANCELLED', user: { name: expect.any(String) } } },
      errors: [],
    });
    expect(await orderWrites()).toBe(writes + 1);

    const other = await placedOrder();
    const union = await post(
      supergraph.url,
      'mutation ($id: ID!) { updateOrderResult(id: $id, input: { status: SHIPPED }) { __typename ... on InvalidOrderTransition { ... @defer { from to } } } }',
      { token: alice, accept, variables: { id: other } },
    );
    expect(assembled(union.parts)).toEqual({ data: { updateOrderResult: { __typename: 'InvalidOrderTransition', from: 'PENDING', to: 'SHIPPED' } }, errors: [] });
    // The union's entity member too: Order's fields were null there (an internal error), the write done.
    const member = await post(supergraph.url, 'mutation ($id: ID!) { updateOrderResult(id: $id, input: { status: CANCELLED }) { __typename ... on Order @defer { id status } } }', {
      token: alice,
      accept,
      variables: { id: other },
    });
    expect(assembled(member.parts)).toEqual({ data: { updateOrderResult: { __typename: 'Order', id: other, status: 'CANCELLED' } }, errors: [] });
    // A query defers alike.
    const query = await post(supergraph.url, 'query ($id: ID!) { order(id: $id) { items { ... @defer { quantity } } } }', { token: alice, accept, variables: { id } });
    expect(assembled(query.parts)).toEqual({ data: { order: { items: [{ quantity: 1 }] } }, errors: [] });
  });

  // The last two stop a subgraph each.
  it("reports a mutation's failed deferred fragment in its part: the write done once, the first part intact", async () => {
    // Placed while the catalog (which prices it) is up.
    const id = await placedOrder();
    await supergraph.stopSubgraph('catalog');
    const writes = await orderWrites();
    const answer = await post(supergraph.url, 'mutation ($id: ID!) { cancelOrder(id: $id) { id status ... @defer { items { quantity product { name } } } } }', {
      token: alice,
      variables: { id },
    });
    expect(answer.status).toBe(200);
    expect(answer.parts[0]).toEqual({ data: { cancelOrder: { id, status: 'CANCELLED' } }, hasNext: true });
    const later = answer.parts.slice(1).flatMap((part) => part.incremental ?? []);
    expect(later).toEqual([
      {
        path: ['cancelOrder'],
        // Product.name is non-null: the product it is missing from is null.
        data: { items: [{ quantity: 1, product: null }] },
        errors: [expect.objectContaining({ path: ['cancelOrder', 'items', 0, 'product', 'name'], extensions: { code: 'SUBGRAPH_UNAVAILABLE' } })],
      },
    ]);
    expect(answer.parts.at(-1)!.hasNext).toBe(false);
    expect(await orderWrites()).toBe(writes + 1);
    expect(await statusOf(id)).toBe('CANCELLED');
  });

  it('applies the error policy to a deferred part: a subgraph that is down is SUBGRAPH_UNAVAILABLE there, the first part intact', async () => {
    await supergraph.stopSubgraph('users');
    const answer = await post(supergraph.url, `query ($id: ID!) { order(id: $id) { id ... @defer { user { name } } } }`, { token: admin, variables: { id: orderId } });
    expect(answer.parts[0]).toEqual({ data: { order: { id: orderId } }, hasNext: true });
    const errors = answer.parts.slice(1).flatMap((part) => [...(part.errors ?? []), ...(part.incremental ?? []).flatMap((entry) => entry.errors ?? [])]);
    expect(errors.length).toBeGreaterThan(0);
    for (const error of errors) expect(error.extensions).toEqual({ code: 'SUBGRAPH_UNAVAILABLE' });
    expect(answer.parts.at(-1)!.hasNext).toBe(false);
  });
});

describe('the Rust planner stays the default for everything else', () => {
  let supergraph: Supergraph;
  beforeAll(async () => {
    supergraph = await startSupergraph();
  });
  afterAll(() => supergraph?.stop());

  it('plans an operation without @defer on the Rust planner (its plan can be inspected), and only a deferred one elsewhere', async () => {
    const admin = await token('ADMIN', 'user-0000');
    const headers = { 'x-ordergraph-query-plan': '1' };
    const plain = await graphql(supergraph.url, `query ($id: ID!) { order(id: $id) { id user { name } } }`, { token: admin, variables: { id: orderId }, headers });
    expect(plain.body.extensions?.['queryPlan']).toMatchObject({ kind: 'QueryPlan' });
    const notDeferred = await graphql(supergraph.url, `query ($id: ID!) { order(id: $id) { id ... @defer(if: false) { user { name } } } }`, {
      token: admin,
      variables: { id: orderId },
      headers,
    });
    expect(notDeferred.body.extensions?.['queryPlan']).toMatchObject({ kind: 'QueryPlan' });
    const deferred = await post(supergraph.url, `query ($id: ID!) { order(id: $id) { id ... @defer { user { name } } } }`, { token: admin, variables: { id: orderId }, headers });
    expect(deferred.parts.length).toBeGreaterThan(1);
  });
});
