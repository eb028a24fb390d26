// The gateway's error policy, error by error: what a client may see of each kind of error the gateway meets.
import { describe, expect, it } from 'vitest';
import { GraphQLError } from 'graphql';
import { createErrorPolicy, createWebSocketFormatter } from '../../src/security/errors.js';

const development = createErrorPolicy({ production: false });
const production = createErrorPolicy({ production: true });
const shape = (error: GraphQLError) => error.toJSON();

describe('the gateway error policy', () => {
  it('keeps an error raised on purpose, extensions included, as the same instance', () => {
    const error = new GraphQLError('Order with id x not found', { path: ['order'], extensions: { code: 'NOT_FOUND', resource: 'Order', id: 'x' } });
    expect(development(error)).toBe(error);
    expect(error.extensions).toEqual({ code: 'NOT_FOUND', resource: 'Order', id: 'x' });
  });

  it('keeps an error a subgraph raised, wrapped by delegation, without internal extensions', () => {
    const subgraph = new GraphQLError('Not authorized', { extensions: { code: 'FORBIDDEN' } });
    const delegated = new GraphQLError('Not authorized', { path: ['order'], originalError: subgraph, extensions: { code: 'FORBIDDEN', serviceName: 'orders' } });
    expect(shape(development(delegated))).toEqual({ message: 'Not authorized', path: ['order'], extensions: { code: 'FORBIDDEN' } });
  });

  it.each([
    ['SUBREQUEST_HTTP_ERROR', 'SUBGRAPH_UNAVAILABLE', 'A service needed for this request is unavailable'],
    ['TIMEOUT_ERROR', 'SUBGRAPH_TIMEOUT', 'A service needed for this request did not answer in time'],
    ['GATEWAY_TIMEOUT', 'SUBGRAPH_TIMEOUT', 'A service needed for this request did not answer in time'],
    ['RESPONSE_VALIDATION_FAILED', 'SUBGRAPH_UNAVAILABLE', 'A service needed for this request is unavailable'],
  ])(
    'turns a failed subgraph fetch (%s) into %s, with no host, port or cause',
    (code, expected, message) => {
      const cause = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:4003'), { code: 'ECONNREFUSED' });
      const error = new GraphQLError('connect ECONNREFUSED 127.0.0.1:4003', {
        path: ['product'],
        originalError: cause,
        extensions: { code, serviceName: 'catalog', request: { body: '{}' }, http: { status: 504 } },
      });
      expect(shape(development(error))).toEqual({ message, path: ['product'], extensions: { code: expected } });
    },
  );

  it.each([
    ['a plain Error', new Error('db password is hunter2')],
    ['a string', 'boom'],
    ['a GraphQLError around a plain Error', new GraphQLError('ECONNRESET', { path: ['user'], originalError: new Error('ECONNRESET') })],
    ['an unknown code', new GraphQLError('schema reloading', { extensions: { code: 'SCHEMA_RELOAD' } })],
    ['no code at all', new GraphQLError('Unexpected error.')],
  ])('masks %s as INTERNAL_SERVER_ERROR, keeping only the path', (_kind, error) => {
    const masked = development(error);
    expect(masked.message).toBe('Internal server error');
    expect(masked.extensions).toEqual({ code: 'INTERNAL_SERVER_ERROR', unexpected: true });
    expect(masked.path).toEqual(error instanceof GraphQLError ? error.path : undefined);
  });

  it.each([
    ['REQUEST_ENTITY_TOO_LARGE', 413, 'PAYLOAD_TOO_LARGE'],
    ['BAD_REQUEST', 405, 'METHOD_NOT_ALLOWED'],
    ['BAD_REQUEST', 400, 'BAD_REQUEST'],
    [undefined, 415, 'UNSUPPORTED_MEDIA_TYPE'],
    ['PERSISTED_QUERY_ID_REQUIRED', 400, 'BAD_REQUEST'],
  ])("renames a library's refusal %s with status %s to %s, keeping the status whatever the client accepts", (code, status, expected) => {
    const error = new GraphQLError('refused', { extensions: { ...(code ? { code } : {}), http: { status, spec: true } } });
    expect(development(error).extensions).toEqual({ code: expected, http: { status } });
  });

  it('gives a variable coercion error BAD_USER_INPUT, as a GraphQL request error', () => {
    const error = new GraphQLError('Variable "$id" of required type "ID!" was not provided.', { extensions: { http: { status: 400 } } });
    expect(development(error).extensions).toEqual({ code: 'BAD_USER_INPUT', http: { status: 400, spec: true } });
  });

  it('strips "Did you mean" suggestions in production only', () => {
    const message = 'Cannot query field "produc" on type "Query". Did you mean "product" or "products"?';
    const error = () => new GraphQLError(message, { extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } });
    expect(development(error()).message).toBe(message);
    expect(production(error()).message).toBe('Cannot query field "produc" on type "Query".');
    const enumValue = new GraphQLError('Variable "$s" got invalid value "PENDIN"; Value "PENDIN" does not exist in "OrderStatus" enum. Did you mean the enum value "PENDING"?');
    expect(production(enumValue).message).toBe('Variable "$s" got invalid value "PENDIN"; Value "PENDIN" does not exist in "OrderStatus" enum.');
  });

  it('quotes at most 32 characters of anything the client sent, and cuts a message at 500', () => {
    const name = 'x'.repeat(100_000);
    const quoted = development(new GraphQLError(`Cannot query field "${name}" on type "Query".`, { extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }));
    expect(quoted.message).toBe(`Cannot query field "${'x'.repeat(32)}…" on type "Query".`);
    const unquoted = development(new GraphQLError(`Unexpected ${name}`, { extensions: { code: 'GRAPHQL_PARSE_FAILED' } }));
    expect(unquoted.message).toHaveLength(501);
  });

  it('changes nothing when applied twice', () => {
    const once = production(new GraphQLError('x', { originalError: new Error('y') }));
    expect(production(once)).toEqual(once);
    const kept = production(new GraphQLError('Not authorized', { extensions: { code: 'FORBIDDEN' } }));
    expect(production(kept)).toBe(kept);
  });
});

describe("a subgraph's own errors (INCLUDE_SUBGRAPH_ERRORS)", () => {
  const only = (included: string) => createErrorPolicy({ production: true, includeSubgraphErrors: (subgraph) => subgraph === included });
  /** As the runtime hands on an error a subgraph answered: named after it, with whatever extensions it sent. */
  const answered = (subgraph: string, message: string, code = 'INTERNAL_SERVER_ERROR') =>
    new GraphQLError(message, { path: ['stock', 'count'], extensions: { code, serviceName: subgraph, stacktrace: ['Error: x', '    at count (/srv/inventory.ts:12:5)'] } });

  it("keeps the subgraph's message where included, with the code and path a masked one has and nothing else", () => {
    const policy = only('inventory');
    expect(shape(policy(answered('inventory', "You should be using the 'a' subgraph!")))).toEqual({
      message: "You should be using the 'a' subgraph!",
      path: ['stock', 'count'],
      extensions: { code: 'INTERNAL_SERVER_ERROR', unexpected: true },
    });
    expect(shape(policy(answered('reviews', 'no opinion')))).toEqual({ message: 'Internal server error', path: ['stock', 'count'], extensions: { code: 'INTERNAL_SERVER_ERROR', unexpected: true } });
  });

  it('gives a code the gateway does not know INTERNAL_SERVER_ERROR either way, and cuts a long message', () => {
    const kept = only('inventory')(answered('inventory', `No rating for "${'x'.repeat(1000)}"`, 'NO_RATING'));
    expect(kept.extensions).toEqual({ code: 'INTERNAL_SERVER_ERROR', unexpected: true });
    expect(kept.message).toBe(`No rating for "${'x'.repeat(32)}…"`);
  });

  it('finds the subgraph through the errors the planner wraps around its answer', () => {
    const relocated = new GraphQLError('out of stock', { path: ['a', 'stock'], originalError: answered('inventory', 'out of stock') });
    expect(only('inventory')(relocated).message).toBe('out of stock');
  });

  it('never shows what the gateway failed with: a thrown exception named after the subgraph, or an error of its own', () => {
    const policy = createErrorPolicy({ production: false, includeSubgraphErrors: () => true });
    const thrown = new GraphQLError('connect ECONNREFUSED 10.0.3.7:4003', {
      path: ['stock'],
      originalError: new Error('connect ECONNREFUSED 10.0.3.7:4003'),
      extensions: { code: 'DOWNSTREAM_SERVICE_ERROR', serviceName: 'inventory' },
    });
    expect(policy(thrown).message).toBe('Internal server error');
    expect(policy(new GraphQLError('db password is hunter2')).message).toBe('Internal server error');
    expect(policy(new Error('db password is hunter2')).message).toBe('Internal server error');
  });

  it('keeps an included message when applied again, as yoga and useErrorPolicy both apply it', () => {
    const policy = only('inventory');
    const once = policy(answered('inventory', 'out of stock'));
    expect(policy(once)).toBe(once);
    expect(createWebSocketFormatter(policy).formatError(once, 'req-1')).toEqual({ message: 'out of stock', path: ['stock', 'count'], extensions: { code: 'INTERNAL_SERVER_ERROR', requestId: 'req-1' } });
  });

  it('includes none by default', () => {
    expect(development(answered('inventory', 'out of stock')).message).toBe('Internal server error');
  });
});

describe('results sent over WebSocket', () => {
  const { formatResult } = createWebSocketFormatter(production);

  it('go through the same policy and leave without yoga’s internal extensions, as yoga writes them over HTTP', () => {
    const refusal = new GraphQLError('Cannot query field "idd" on type "Order". Did you mean "id"?', {
      extensions: { code: 'GRAPHQL_VALIDATION_FAILED', http: { spec: true, status: 400 } },
    });
    const result = { errors: [refusal, new GraphQLError('db password is hunter2')], extensions: { http: { headers: { ETag: 'x' } } } };
    expect(formatResult(result)).toEqual({
      errors: [
        { message: 'Cannot query field "idd" on type "Order".', extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } },
        { message: 'Internal server error', extensions: { code: 'INTERNAL_SERVER_ERROR' } },
      ],
    });
  });

  it('keep their data and other extensions', () => {
    const result = { data: { order: null }, errors: [new GraphQLError('Not authorized', { path: ['order'], extensions: { code: 'FORBIDDEN' } })], extensions: { tracing: { version: 1 } } };
    expect(formatResult(result)).toEqual({
      data: { order: null },
      errors: [{ message: 'Not authorized', path: ['order'], extensions: { code: 'FORBIDDEN' } }],
      extensions: { tracing: { version: 1 } },
    });
  });
});
