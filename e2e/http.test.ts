// HTTP semantics of the gateway over real HTTP (the GraphQL-over-HTTP spec): the graphql-http
// server audit, every kind of bad request with its status and code, no schema suggestions in production, and a
// subgraph that is down. Every error entry carries extensions.code and nothing internal.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverAudits } from 'graphql-http';
import { toGlobalId } from '@ordergraph/core';
import { graphql, token, withoutRequestIds } from '@ordergraph/testkit';
import { startSupergraph, type Supergraph } from '@ordergraph/testkit/e2e';

const MiB = 1024 * 1024;
const JSON_TYPE = 'application/json';
const GRAPHQL_RESPONSE = 'application/graphql-response+json';

interface Answer {
  status: number;
  headers: Headers;
  body: { data?: unknown; errors?: { message: string; extensions?: Record<string, unknown> }[] };
}

async function send(url: string, init: RequestInit & { duplex?: 'half' } = {}): Promise<Answer> {
  const response = await fetch(url, init);
  const text = await response.text();
  let body: Answer['body'];
  try {
    body = JSON.parse(text) as Answer['body'];
  } catch {
    throw new Error(`${response.status} without a JSON body: ${text.slice(0, 200)}`);
  }
  // Whatever went wrong, every entry has a code and nothing internal.
  for (const error of body.errors ?? []) {
    expect(error.extensions?.['code']).toEqual(expect.any(String));
    expect(JSON.stringify(error)).not.toMatch(/originalError|stacktrace|serviceName|ECONNREFUSED|127\.0\.0\.1|SyntaxError|\bat .+:\d+/);
  }
  return { status: response.status, headers: response.headers, body: withoutRequestIds(body, response.headers) };
}

const post = (url: string, body: BodyInit | null, headers: Record<string, string> = { 'content-type': JSON_TYPE }) =>
  send(url, { method: 'POST', headers, ...(body === null ? {} : { body }) });
const get = (url: string, query: string, headers: Record<string, string> = { 'apollo-require-preflight': 'true' }) =>
  send(`${url}?${new URLSearchParams({ query })}`, { headers });
const codes = (answer: Answer) => answer.body.errors?.map((error) => error.extensions?.['code']);

describe('the gateway in development', () => {
  let supergraph: Supergraph;
  let url: string;
  beforeAll(async () => {
    supergraph = await startSupergraph();
    url = supergraph.url;
  });
  afterAll(() => supergraph?.stop());

  describe('graphql-http server audit', () => {
    it('passes every MUST and SHOULD audit', async () => {
      const results = await Promise.all(serverAudits({ url }).map((audit) => audit.fn()));
      const failed = results.filter((result) => result.status !== 'ok');
      expect(failed.filter((result) => !result.name.startsWith('MAY')).map((result) => `${result.id} ${result.name}`)).toEqual([]);
      // The MAY audits that fail are plain GETs with no header forcing a CORS preflight, refused as CSRF-prone
      // the GraphQL-over-HTTP spec lets a server refuse them. The next test sends them with one.
      for (const result of failed) {
        expect(result.name).toMatch(/GET/);
        expect('response' in result && (await result.response.json())).toMatchObject({ errors: [{ message: expect.stringContaining('CSRF') }] });
      }
    });

    it('passes every audit, MAY included, when GET requests carry a preflight header', async () => {
      const fetchFn = (input: string, init: RequestInit = {}) =>
        fetch(input, { ...init, headers: { ...(init.headers as Record<string, string>), 'apollo-require-preflight': 'true' } });
      const results = await Promise.all(serverAudits({ url, fetchFn }).map((audit) => audit.fn()));
      expect(results.filter((result) => result.status !== 'ok').map((result) => `${result.id} ${result.name}`)).toEqual([]);
    });
  });

  describe('bad requests', () => {
    it.each([JSON_TYPE, GRAPHQL_RESPONSE])('malformed JSON: 400 BAD_REQUEST (accepting %s), without the parser message', async (accept) => {
      const answer = await post(url, '{"query": "{ __typename }"', { 'content-type': JSON_TYPE, accept });
      expect(answer.status).toBe(400);
      expect(answer.body.errors).toEqual([{ message: 'POST body sent invalid JSON.', extensions: { code: 'BAD_REQUEST' } }]);
    });

    it('an empty POST body: 400 BAD_REQUEST', async () => {
      const answer = await post(url, null);
      expect(answer.status).toBe(400);
      expect(codes(answer)).toEqual(['BAD_REQUEST']);
    });

    it.each([
      ['no Content-Type', {}],
      ['text/plain (a CSRF-prone simple request)', { 'content-type': 'text/plain' }],
      ['application/x-www-form-urlencoded (a CSRF-prone simple request)', { 'content-type': 'application/x-www-form-urlencoded' }],
      ['multipart/form-data (a CSRF-prone simple request)', { 'content-type': 'multipart/form-data; boundary=x' }],
      ['application/graphql', { 'content-type': 'application/graphql' }],
    ])('a POST with %s: 415 UNSUPPORTED_MEDIA_TYPE, naming the type to use', async (_kind, headers: Record<string, string>) => {
      const body = headers['content-type']?.startsWith('application/x-www') ? 'query=%7B__typename%7D' : '{"query":"{ __typename }"}';
      const answer = await post(url, body, headers);
      expect(answer.status).toBe(415);
      expect(answer.headers.get('accept')).toBe(JSON_TYPE);
      expect(codes(answer)).toEqual(['UNSUPPORTED_MEDIA_TYPE']);
    });

    it('Content-Type: application/json with a charset is fine', async () => {
      const answer = await post(url, '{"query":"{ __typename }"}', { 'content-type': 'application/json; charset=utf-8' });
      expect(answer).toMatchObject({ status: 200, body: { data: { __typename: 'Query' } } });
    });

    it('a mutation sent by GET: 405 METHOD_NOT_ALLOWED with Allow: POST', async () => {
      const answer = await get(url, `mutation { cancelOrder(id: "${toGlobalId('Order', 'x')}") { id } }`);
      expect(answer.status).toBe(405);
      expect(answer.headers.get('allow')).toBe('POST');
      expect(codes(answer)).toEqual(['METHOD_NOT_ALLOWED']);
    });

    it('another method: 405 METHOD_NOT_ALLOWED with Allow: GET, POST', async () => {
      const answer = await send(url, { method: 'PUT', headers: { 'content-type': JSON_TYPE }, body: '{"query":"{ __typename }"}' });
      expect(answer.status).toBe(405);
      expect(answer.headers.get('allow')).toBe('GET, POST');
      expect(codes(answer)).toEqual(['METHOD_NOT_ALLOWED']);
    });

    // Padded with a comment: a string that long would be refused (STRING_TOO_LONG) before the body's size matters.
    const padded = (bytes: number) => {
      const head = '{"query":"{ __typename } #';
      return `${head}${'x'.repeat(bytes - head.length - 2)}"}`;
    };

    it('a body of exactly 1 MiB is served', async () => {
      const body = padded(MiB);
      expect(Buffer.byteLength(body)).toBe(MiB);
      expect((await post(url, body)).status).toBe(200);
    });

    it('a body over 1 MiB: 413 PAYLOAD_TOO_LARGE, from its Content-Length', async () => {
      const answer = await post(url, padded(MiB + 1));
      expect(answer.status).toBe(413);
      expect(codes(answer)).toEqual(['PAYLOAD_TOO_LARGE']);
    });

    it('a chunked body over 1 MiB (no Content-Length): 413 PAYLOAD_TOO_LARGE', async () => {
      const chunk = new TextEncoder().encode(padded(256 * 1024));
      let sent = 0;
      const stream = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent++ < 8) controller.enqueue(chunk);
          else controller.close();
        },
      });
      const answer = await send(url, { method: 'POST', headers: { 'content-type': JSON_TYPE }, body: stream, duplex: 'half' });
      expect(answer.status).toBe(413);
      expect(codes(answer)).toEqual(['PAYLOAD_TOO_LARGE']);
    });

    it('a JSON-array batch: 400 BAD_REQUEST', async () => {
      const answer = await post(url, JSON.stringify([{ query: '{ __typename }' }, { query: '{ __typename }' }]));
      expect(answer.status).toBe(400);
      expect(answer.body.errors).toEqual([{ message: 'Batching is not supported.', extensions: { code: 'BAD_REQUEST' } }]);
    });

    it('a GET without a header that forces a CORS preflight: 400 BAD_REQUEST (CSRF prevention)', async () => {
      const answer = await get(url, '{ __typename }', {});
      expect(answer.status).toBe(400);
      expect(answer.body.errors).toEqual([{ message: expect.stringMatching(/Cross-Site Request Forgery.*apollo-require-preflight/), extensions: { code: 'BAD_REQUEST' } }]);
      expect((await get(url, '{ __typename }', { 'content-type': 'text/plain' })).status).toBe(400);
    });

    it.each([
      ['apollo-require-preflight', { 'apollo-require-preflight': 'true' }],
      ['x-apollo-operation-name', { 'x-apollo-operation-name': 'Q' }],
      ['an Authorization header', { authorization: '' }],
      ['a non-simple Content-Type', { 'content-type': JSON_TYPE }],
    ])('a GET query with %s is served', async (_kind, headers: Record<string, string>) => {
      if (headers['authorization'] === '') headers = { authorization: `Bearer ${await token('USER', 'user-0001')}` };
      const answer = await get(url, '{ __typename }', headers);
      expect(answer).toMatchObject({ status: 200, body: { data: { __typename: 'Query' } } });
    });

    it('an Accept the server cannot serve: 406 NOT_ACCEPTABLE, still with an error entry', async () => {
      const answer = await post(url, '{"query":"{ __typename }"}', { 'content-type': JSON_TYPE, accept: 'text/html' });
      expect(answer.status).toBe(406);
      expect(codes(answer)).toEqual(['NOT_ACCEPTABLE']);
    });

    it.each([
      ['no query', { variables: {} }, 'BAD_REQUEST'],
      ['a query that is not a string', { query: 42 }, 'BAD_REQUEST'],
      ['an unknown parameter', { query: '{ __typename }', qeury: 'x' }, 'BAD_REQUEST'],
      ['variables that are not an object', { query: '{ __typename }', variables: 'x' }, 'BAD_REQUEST'],
      ['an operationName the document lacks', { query: 'query A { __typename }', operationName: 'B' }, 'OPERATION_RESOLUTION_FAILURE'],
    ])('a request with %s: 400 %s', async (_kind, body, code) => {
      const answer = await post(url, JSON.stringify(body));
      expect(answer.status).toBe(400);
      expect(codes(answer)).toEqual([code]);
    });

    it.each([
      ['a document that does not parse', { query: '{ product(id: "x") { ' }, 'GRAPHQL_PARSE_FAILED'],
      ['a document that does not validate', { query: '{ product(id: "x") { color } }' }, 'GRAPHQL_VALIDATION_FAILED'],
      ['a variable of the wrong type', { query: 'query ($id: ID!) { product(id: $id) { id } }', variables: { id: { nested: true } } }, 'BAD_USER_INPUT'],
      ['a missing non-null variable', { query: 'query ($id: ID!) { product(id: $id) { id } }', variables: {} }, 'BAD_USER_INPUT'],
    ])('%s: %s, 200 for application/json and 400 for application/graphql-response+json', async (_kind, body, code) => {
      const legacy = await post(url, JSON.stringify(body), { 'content-type': JSON_TYPE, accept: JSON_TYPE });
      expect(legacy.status).toBe(200);
      expect(legacy.body).not.toHaveProperty('data');
      expect(codes(legacy)).toEqual([code]);
      const strict = await post(url, JSON.stringify(body), { 'content-type': JSON_TYPE, accept: GRAPHQL_RESPONSE });
      expect(strict.status).toBe(400);
      expect(codes(strict)).toEqual([code]);
    });

    it('suggests field names outside production', async () => {
      const { body } = await graphql(url, '{ produc(id: "x") { id } }');
      expect(body.errors?.[0]?.message).toMatch(/Did you mean "product"/);
    });
  });
});

describe('the gateway in production', () => {
  const SECRET = 'http-test-secret-of-at-least-32-characters';
  let supergraph: Supergraph;
  beforeAll(async () => {
    supergraph = await startSupergraph({ env: { NODE_ENV: 'production', JWT_SECRET: SECRET } });
  });
  afterAll(() => supergraph?.stop());

  it.each([
    ['an unknown field', '{ produc(id: "x") { id } }', {}, 'Cannot query field "produc" on type "Query".'],
    ['an unknown argument', '{ product(ids: "x") { id } }', {}, /^Unknown argument "ids" on field "Query.product"\.$/],
    ['an unknown type', 'query ($f: UserFiltr) { users(filter: $f) { id } }', {}, /^Unknown type "UserFiltr"\.$/],
    ['an enum value in a variable', 'mutation ($i: UpdateOrderInput!) { updateOrder(id: "x", input: $i) { id } }', { i: { status: 'PENDIN' } }, /does not exist in "OrderStatus" enum\.$/],
  ])('gives no "Did you mean" suggestion for %s', async (_kind, query, variables, message) => {
    const admin = await token('ADMIN', 'user-0000', { secret: SECRET });
    const { body } = await graphql(supergraph.url, query, { variables, token: admin });
    expect(body.errors).toContainEqual(expect.objectContaining({ message: typeof message === 'string' ? message : expect.stringMatching(message) }));
    expect(JSON.stringify(body)).not.toMatch(/Did you mean/);
  });
});

describe('a subgraph that is down', () => {
  let supergraph: Supergraph;
  beforeAll(async () => {
    supergraph = await startSupergraph();
    await supergraph.stopSubgraph('catalog');
  });
  afterAll(() => supergraph?.stop());

  it('answers with SUBGRAPH_UNAVAILABLE and no internal detail, and the other subgraphs still answer', async () => {
    const alice = await token('USER', 'user-0001');
    const answer = await send(supergraph.url, {
      method: 'POST',
      headers: { 'content-type': JSON_TYPE, accept: GRAPHQL_RESPONSE, authorization: `Bearer ${alice}` },
      body: JSON.stringify({
        query: `query ($id: ID!, $p: ID!) { user(id: $id) { id } product(id: $p) { name } }`,
        variables: { id: toGlobalId('User', 'user-0001'), p: toGlobalId('Product', 'product-0001') },
      }),
    });
    expect(answer.status).toBe(200);
    expect(answer.body.data).toEqual({ user: { id: toGlobalId('User', 'user-0001') }, product: null });
    expect(answer.body.errors).toEqual([
      { message: 'A service needed for this request is unavailable', path: ['product'], extensions: { code: 'SUBGRAPH_UNAVAILABLE' } },
    ]);
  });

  it('a nested field of the missing subgraph is null with SUBGRAPH_UNAVAILABLE', async () => {
    const alice = await token('USER', 'user-0001');
    const { body } = await graphql(supergraph.url, `query ($id: ID!) { user(id: $id) { orders(limit: 1) { id items { product { name } } } } }`, {
      variables: { id: toGlobalId('User', 'user-0001') },
      token: alice,
    });
    expect(body.errors?.map((error) => error.extensions?.['code'])).toContain('SUBGRAPH_UNAVAILABLE');
    expect(JSON.stringify(body)).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|catalog/);
  });
});
