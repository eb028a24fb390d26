// The users subgraph over real HTTP, seeded with the shared data set.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger, toGlobalId } from '@ordergraph/core';
import { type SubgraphService } from '@ordergraph/subgraph-kit';
import { graphql, readCounter, token } from '@ordergraph/testkit';
import { loadUsersConfig } from '../src/config.js';
import { createUsersService } from '../src/server.js';

let service: SubgraphService;
let url: string;
let admin: string;
let alice: string;
const aliceId = toGlobalId('User', 'user-0001');
const bobId = toGlobalId('User', 'user-0002');

beforeAll(async () => {
  // Nothing listens on port 9 (discard): the other subgraphs are not running here.
  const elsewhere = 'http://127.0.0.1:9/graphql';
  service = await createUsersService(loadUsersConfig({ SEED: 'true', LOG_LEVEL: 'silent', ORDERS_URL: elsewhere, CATALOG_URL: elsewhere }), createLogger('users', 'silent'));
  url = await service.listen(0, '127.0.0.1');
  admin = await token('ADMIN', 'user-0000');
  alice = await token('USER', 'user-0001');
});
afterAll(() => service.stop());

const codes = (body: { errors?: { extensions?: Record<string, unknown> }[] }) => body.errors?.map((error) => error.extensions?.['code']);

describe('user(id)', () => {
  const query = 'query ($id: ID!) { user(id: $id) { id email name role createdAt } }';

  it('lets a user read themself, email included', async () => {
    const { body } = await graphql(url, query, { variables: { id: aliceId }, token: alice });
    expect(body.errors).toBeUndefined();
    expect(body.data?.user).toEqual({ id: aliceId, email: 'user1@example.com', name: expect.any(String), role: 'USER', createdAt: '2026-01-01T01:00:00.000Z' });
  });

  it('lets an admin read anyone', async () => {
    const { body } = await graphql(url, query, { variables: { id: bobId }, token: admin });
    expect(body.data?.user).toMatchObject({ id: bobId, email: 'user2@example.com' });
  });

  it('answers another user exactly as a missing one: a null user and NOT_FOUND', async () => {
    const { body } = await graphql(url, query, { variables: { id: bobId }, token: alice });
    expect(body.data?.user).toBeNull();
    expect(body.errors?.[0]).toMatchObject({ message: `User with id ${bobId} not found`, path: ['user'], extensions: { code: 'NOT_FOUND', resource: 'User', id: bobId } });
    const ghost = toGlobalId('User', 'ghost');
    const missing = await graphql(url, query, { variables: { id: ghost }, token: alice });
    expect(missing.body.errors?.[0]).toMatchObject({ message: `User with id ${ghost} not found`, extensions: { code: 'NOT_FOUND' } });
  });

  it('refuses anonymous callers with UNAUTHENTICATED', async () => {
    const { body } = await graphql(url, query, { variables: { id: aliceId } });
    expect(body.data?.user).toBeNull();
    expect(codes(body)).toEqual(['UNAUTHENTICATED']);
  });

  it.each([
    ['unknown', toGlobalId('User', 'nobody')],
    ['malformed', 'not-an-id'],
    ['of another type', toGlobalId('Order', 'order-0001')],
  ])('answers an %s ID with NOT_FOUND, resource and id', async (_kind, id) => {
    const { status, body } = await graphql(url, query, { variables: { id }, token: admin });
    expect(status).toBe(200);
    expect(body.data?.user).toBeNull();
    expect(body.errors?.[0]).toMatchObject({ path: ['user'], extensions: { code: 'NOT_FOUND', resource: 'User', id } });
  });

  it('refuses a present but invalid token with 401', async () => {
    const { status, body } = await graphql(url, query, { variables: { id: aliceId }, token: 'not.a.token' });
    expect(status).toBe(401);
    expect(codes(body)).toEqual(['UNAUTHENTICATED']);
  });
});

describe('users(filter, limit, offset)', () => {
  const query = 'query ($filter: UserFilter, $limit: Int, $offset: Int) { users(filter: $filter, limit: $limit, offset: $offset) { id email role } }';

  it('defaults to 20 users, oldest first', async () => {
    const { body } = await graphql(url, query, { token: admin });
    expect(body.data?.users).toHaveLength(20);
    expect(body.data?.users[0]).toMatchObject({ id: toGlobalId('User', 'user-0000'), role: 'ADMIN' });
  });

  it('pages with limit and offset', async () => {
    const { body } = await graphql(url, query, { variables: { limit: 3, offset: 5 }, token: admin });
    expect(body.data?.users.map((user: { email: string }) => user.email)).toEqual(['user5@example.com', 'user6@example.com', 'user7@example.com']);
  });

  it('filters by role, email (case-insensitive) and createdAfter', async () => {
    const byRole = await graphql(url, query, { variables: { filter: { role: 'ADMIN' } }, token: admin });
    expect(byRole.body.data?.users).toEqual([expect.objectContaining({ email: 'admin@example.com' })]);
    const byEmail = await graphql(url, query, { variables: { filter: { email: 'USER9@example.com' } }, token: admin });
    expect(byEmail.body.data?.users).toEqual([expect.objectContaining({ email: 'user9@example.com' })]);
    const recent = await graphql(url, query, { variables: { filter: { createdAfter: '2026-01-05T02:00:00.000Z' }, limit: 100 }, token: admin });
    expect(recent.body.data?.users.map((user: { email: string }) => user.email)).toEqual(['user99@example.com']);
  });

  it.each([[{ limit: 101 }], [{ limit: -1 }], [{ offset: -3 }]])('rejects %j with BAD_USER_INPUT', async (variables) => {
    const { body } = await graphql(url, query, { variables, token: admin });
    expect(codes(body)).toEqual(['BAD_USER_INPUT']);
  });

  it('is for administrators only', async () => {
    expect(codes((await graphql(url, query, { token: alice })).body)).toEqual(['FORBIDDEN']);
    expect(codes((await graphql(url, query)).body)).toEqual(['UNAUTHENTICATED']);
  });
});

describe('usersConnection (keyset)', () => {
  const query = `query ($first: Int, $after: String, $last: Int, $before: String, $filter: UserFilter) {
    usersConnection(first: $first, after: $after, last: $last, before: $before, filter: $filter) {
      totalCount
      edges { cursor node { id email } }
      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    }
  }`;
  type Page = {
    totalCount: number;
    edges: { cursor: string; node: { id: string; email: string } }[];
    pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
  };
  const page = async (variables: Record<string, unknown>): Promise<Page> => {
    const { body } = await graphql(url, query, { variables, token: admin });
    expect(body.errors).toBeUndefined();
    return body.data?.usersConnection as Page;
  };

  it('walks forward through every user exactly once, even while users are created', async () => {
    const seen: string[] = [];
    let after: string | null = null;
    let first = true;
    for (;;) {
      const current: Page = await page({ first: 30, after });
      expect(current.pageInfo.hasPreviousPage).toBe(!first);
      seen.push(...current.edges.map((edge) => edge.node.email));
      if (first) {
        // A write in the middle of the walk: keyset cursors neither skip nor repeat what was there before.
        await graphql(url, 'mutation ($input: CreateUserInput!) { createUser(input: $input) { id } }', {
          variables: { input: { email: 'walker@example.com', name: 'Walker' } },
          token: admin,
        });
        first = false;
      }
      if (!current.pageInfo.hasNextPage) break;
      after = current.pageInfo.endCursor;
    }
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toHaveLength(101);
    expect(seen.at(-1)).toBe('walker@example.com');
  });

  it('walks backward with last/before', async () => {
    const lastPage = await page({ last: 2, filter: { role: 'USER' } });
    expect(lastPage.pageInfo).toMatchObject({ hasPreviousPage: true, hasNextPage: false });
    const before = await page({ last: 2, before: lastPage.pageInfo.startCursor, filter: { role: 'USER' } });
    expect(before.pageInfo).toMatchObject({ hasPreviousPage: true, hasNextPage: true });
    expect(before.edges.at(-1)?.cursor).not.toBe(lastPage.edges[0]?.cursor);
  });

  it('counts the filtered total', async () => {
    expect((await page({ first: 1, filter: { role: 'ADMIN' } })).totalCount).toBe(1);
  });

  it.each([[{ first: 1, last: 1 }], [{ first: 101 }], [{ after: 'garbage' }], [{ last: 1, before: 'x' }]])('rejects %j', async (variables) => {
    const { body } = await graphql(url, query, { variables, token: admin });
    expect(codes(body)).toEqual(['BAD_USER_INPUT']);
  });
});

describe('createUser', () => {
  const mutation = 'mutation ($input: CreateUserInput!) { createUser(input: $input) { id email name role createdAt } }';

  it('creates a USER by default', async () => {
    const { body } = await graphql(url, mutation, { variables: { input: { email: 'New.Person@Example.com', name: 'New Person' } }, token: admin });
    expect(body.data?.createUser).toMatchObject({ email: 'new.person@example.com', name: 'New Person', role: 'USER' });
    expect(body.data?.createUser.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    // For the gateway's entity cache: the new user, so the lists of users it may join are dropped.
    expect(body.extensions?.['invalidation']).toEqual([{ kind: 'entity', subgraph: 'users', type: 'User', key: { id: body.data?.createUser.id } }]);
  });

  it('refuses a taken email, whatever its case, with EMAIL_TAKEN', async () => {
    const { body } = await graphql(url, mutation, { variables: { input: { email: 'USER3@example.com', name: 'Copy' } }, token: admin });
    expect(body.data).toBeNull();
    expect(body.errors?.[0]).toMatchObject({ path: ['createUser'], extensions: { code: 'EMAIL_TAKEN' } });
  });

  it.each([
    [{ email: 'no-at-sign', name: 'X' }],
    [{ email: 'ok@example.com', name: '   ' }],
  ])('rejects invalid input %j with BAD_USER_INPUT', async (input) => {
    const { body } = await graphql(url, mutation, { variables: { input }, token: admin });
    expect(codes(body)).toEqual(['BAD_USER_INPUT']);
  });

  it('requires ADMIN', async () => {
    const input = { email: 'sneaky@example.com', name: 'Sneaky', role: 'ADMIN' };
    expect(codes((await graphql(url, mutation, { variables: { input }, token: alice })).body)).toEqual(['FORBIDDEN']);
    expect(codes((await graphql(url, mutation, { variables: { input } })).body)).toEqual(['UNAUTHENTICATED']);
  });
});

describe('node(id)', () => {
  const query = 'query ($id: ID!) { node(id: $id) { __typename id ... on User { email } } }';

  it('resolves a user', async () => {
    const { body } = await graphql(url, query, { variables: { id: aliceId }, token: alice });
    expect(body.data?.node).toEqual({ __typename: 'User', id: aliceId, email: 'user1@example.com' });
  });

  // Resolving them through their owners is covered end to end (e2e/supergraph.test.ts, e2e/auth.test.ts).
  it('asks the owner of an order or product, and answers SUBGRAPH_UNAVAILABLE without detail when it cannot be reached', async () => {
    const { body } = await graphql(url, query, { variables: { id: toGlobalId('Order', 'order-0001') }, token: alice });
    expect(body.data?.node).toBeNull();
    expect(body.errors).toEqual([expect.objectContaining({ path: ['node'], extensions: expect.objectContaining({ code: 'SUBGRAPH_UNAVAILABLE', subgraph: 'orders' }) })]);
    expect(JSON.stringify(body)).not.toMatch(/127\.0\.0\.1|ECONNREFUSED/);
  });

  it('answers a malformed ID with null and NOT_FOUND', async () => {
    const { body } = await graphql(url, query, { variables: { id: '!!' }, token: alice });
    expect(body.data?.node).toBeNull();
    expect(codes(body)).toEqual(['NOT_FOUND']);
  });
});

describe('_entities', () => {
  const query = 'query ($representations: [_Any!]!) { _entities(representations: $representations) { ... on User { id name } } }';
  const metrics = () => url.replace('/graphql', '/metrics');

  it('resolves a batch of user references with one store query', async () => {
    const ids = Array.from({ length: 25 }, (_, i) => toGlobalId('User', `user-${String(i + 1).padStart(4, '0')}`));
    const before = await readCounter(metrics(), 'datastore_operations_total', { collection: 'users', operation: 'find' });
    const { body } = await graphql(url, query, { variables: { representations: ids.map((id) => ({ __typename: 'User', id })) }, token: admin });
    const after = await readCounter(metrics(), 'datastore_operations_total', { collection: 'users', operation: 'find' });
    expect(body.data?._entities.map((user: { id: string }) => user.id)).toEqual(ids);
    expect(after - before).toBe(1);
  });

  it('answers an unknown reference with NOT_FOUND at its index', async () => {
    const representations = [{ __typename: 'User', id: aliceId }, { __typename: 'User', id: toGlobalId('User', 'ghost') }];
    const { body } = await graphql(url, query, { variables: { representations }, token: admin });
    expect(body.data?._entities[0]).toMatchObject({ id: aliceId });
    expect(body.data?._entities[1]).toBeNull();
    expect(body.errors?.[0]).toMatchObject({ path: ['_entities', 1], extensions: { code: 'NOT_FOUND' } });
  });
});

describe('operations endpoints', () => {
  it('answers a GET query from its query string, and sends no ETag and no federated trace', async () => {
    const query = encodeURIComponent('{ user(id: "' + aliceId + '") { email } }');
    const response = await fetch(`${url}?query=${query}#ignored`, { headers: { authorization: `Bearer ${alice}`, 'apollo-require-preflight': 'true' } });
    expect(await response.json()).toEqual({ data: { user: { email: 'user1@example.com' } } });
    expect(response.headers.get('etag')).toBeNull();
    const posted = await graphql(url, '{ __typename }', { token: alice });
    expect(posted.headers.get('etag')).toBeNull();
    expect(posted.headers.get('content-type')).toBe('application/graphql-response+json; charset=utf-8');
    // No federated trace (ftv1), even when asked for: nothing here reports usage to Apollo.
    const traced = await graphql(url, '{ __typename }', { token: alice, headers: { 'apollo-federation-include-trace': 'ftv1' } });
    expect(traced.body).toEqual({ data: { __typename: 'Query' } });
  });

  it('serves /healthz, /readyz and /metrics', async () => {
    const base = url.replace('/graphql', '');
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    expect(await (await fetch(`${base}/readyz`)).json()).toEqual({ status: 'ready' });
    expect(await (await fetch(`${base}/metrics`)).text()).toContain('graphql_request_duration_seconds');
    const head = await fetch(`${base}/healthz`, { method: 'HEAD' });
    expect([head.status, await head.text()]).toEqual([200, '']);
  });

  it("answers in the media type each Accept header chooses, as Apollo Server negotiates it", async () => {
    const answer = async (accept: string | undefined) => {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${alice}`, ...(accept === undefined ? {} : { accept }) },
        body: JSON.stringify({ query: '{ __typename }' }),
      });
      await response.arrayBuffer();
      return `${response.status} ${response.headers.get('content-type')}`;
    };
    const json = '200 application/json; charset=utf-8';
    const graphqlResponse = '200 application/graphql-response+json; charset=utf-8';
    // The gateway's (Hive's HTTP executor), twice: the second from what the kit negotiated before.
    expect(await answer('application/graphql-response+json, application/json, multipart/mixed')).toBe(graphqlResponse);
    expect(await answer('application/graphql-response+json, application/json, multipart/mixed')).toBe(graphqlResponse);
    expect(await answer(undefined)).toBe(json);
    expect(await answer('*/*')).toBe(json);
    expect(await answer('application/json')).toBe(json);
    expect(await answer('application/json;q=0.5, application/graphql-response+json')).toBe(graphqlResponse);
    expect(await answer('application/*')).toBe(json);
    expect(await answer('application/json; callbackSpec=1.0')).toBe('200 application/json; callbackSpec=1.0; charset=utf-8');
    expect(await answer('text/html')).toMatch(/^406 /);
  });

  it('refuses what is not a GraphQL call with a code, its request ID, and the right status', async () => {
    const base = url.replace('/graphql', '');
    const refusal = async (response: Response) => {
      const body = (await response.json()) as { errors: { extensions: Record<string, unknown> }[] };
      expect(body.errors[0]!.extensions['requestId']).toBe(response.headers.get('x-request-id'));
      return [response.status, body.errors[0]!.extensions['code']];
    };
    const post = (body: BodyInit, headers: Record<string, string> = {}) =>
      fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${alice}`, ...headers }, body, duplex: 'half' } as RequestInit);
    expect(await refusal(await post('{"query": "{ __typename }"'))).toEqual([400, 'BAD_REQUEST']);
    const large = JSON.stringify({ query: `{ __typename } # ${'x'.repeat(1024 * 1024)}` });
    expect(await refusal(await post(large))).toEqual([413, 'PAYLOAD_TOO_LARGE']);
    // Chunked, with no Content-Length to refuse it by: counted as it arrives.
    const chunked = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(large));
        controller.close();
      },
    });
    expect(await refusal(await post(chunked as unknown as BodyInit))).toEqual([413, 'PAYLOAD_TOO_LARGE']);
    expect(await refusal(await post('{}', { 'content-encoding': 'gzip' }))).toEqual([415, 'UNSUPPORTED_MEDIA_TYPE']);
    expect(await refusal(await fetch(`${base}/nothing`))).toEqual([404, 'NOT_FOUND']);
    expect(await refusal(await fetch(`${base}/healthz`, { method: 'POST' }))).toEqual([404, 'NOT_FOUND']);
    // And the subgraph still answers.
    expect((await graphql(url, '{ __typename }', { token: alice })).body).toEqual({ data: { __typename: 'Query' } });
  });

  it('answers hostile bodies under 1 MB with a 400 while other calls are answered beside them', async () => {
    const post = (body: string) =>
      fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${alice}`, 'apollo-require-preflight': 'true' }, body });
    const hostile = [
      '['.repeat(500_000) + ']'.repeat(500_000), // nested half a million deep
      JSON.stringify({ ['q'.repeat(900_000)]: 1 }), // one huge name
      JSON.stringify({ query: `{ ${'__typename '.repeat(80_000)}}` }).slice(0, -1), // cut short
      JSON.stringify([{ query: '{ __typename }' }, { query: '{ __typename }' }]), // a batch: not served
      '"{ __typename }"', // a string, not an object
    ];
    const [answers, beside] = await Promise.all([
      Promise.all(hostile.map(async (body) => (await post(body)).status)),
      graphql(url, '{ __typename }', { token: alice }),
    ]);
    expect(answers).toEqual([400, 400, 400, 400, 400]);
    expect(beside.body).toEqual({ data: { __typename: 'Query' } });
  });
});
