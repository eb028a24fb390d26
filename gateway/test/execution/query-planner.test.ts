// Result completion on its own: which errors null the field at their path. An entity fetch that got no answer leaves
// the entity another subgraph returned, with its missing fields null as their nullability says; a subgraph's own
// error at an entity (an unknown node) nulls it.
import { describe, expect, it } from 'vitest';
import { GraphQLError, buildSchema, parse } from 'graphql';
import { completeResult } from '../../src/execution/query-planner.js';

const schema = buildSchema(`
  type User { id: ID! name: String email: String! }
  type Order { id: ID! user: User! }
  type Query { order: Order }
`);
const failure = (code: string, extensions: Record<string, unknown> = {}) =>
  new GraphQLError('failed', { path: ['order', 'user'], extensions: { code, ...extensions } });
/** What the Rust planner's executor hands over when the users fetch of `order.user` failed: the representation alone. */
const fetched = { data: { order: { id: 'o-1', user: { __typename: 'User', id: 'u-1' } } } };
const complete = (query: string, error: GraphQLError) => completeResult({ schema, document: parse(query) }, { ...fetched, errors: [error] });

describe('completion of a result with a failed entity fetch', () => {
  it.each([
    ['refused or reset', failure('SUBREQUEST_HTTP_ERROR')],
    ['timed out', failure('GATEWAY_TIMEOUT')],
    ['its circuit open', failure('SUBGRAPH_UNAVAILABLE', { circuit: 'open' })],
  ])('%s: keeps the entity, its nullable field null', (_, error) => {
    expect(complete('{ order { id user { id name } } }', error)).toEqual({ data: { order: { id: 'o-1', user: { id: 'u-1', name: null } } }, errors: [error] });
  });

  it('a non-null field of the failed subgraph still nulls its parents, as graphql-js does', () => {
    expect(complete('{ order { id user { email } } }', failure('GATEWAY_TIMEOUT')).data).toEqual({ order: null });
  });

  it("a subgraph's own error at the entity nulls it (and its non-null parents)", () => {
    expect(complete('{ order { id user { id name } } }', failure('NOT_FOUND')).data).toEqual({ order: null });
  });
});
