// Which requests get @defer and @stream answered in parts, and which documents deliver anything later: the decisions defer.ts makes before
// any subgraph is called.
import { describe, expect, it } from 'vitest';
import { parse } from 'graphql';
import { acceptsIncremental, deliversIncrementally } from '../../src/execution/defer.js';

const accepting = (accept: string) => acceptsIncremental(new Request('http://gateway/graphql', { headers: { accept } }));

describe('acceptsIncremental', () => {
  it.each([
    'multipart/mixed;deferSpec=20220824',
    'multipart/mixed; deferSpec="20220824", application/json',
    'multipart/mixed;deferSpec=20220824,application/graphql-response+json,application/json;q=0.9',
    'application/json, multipart/mixed',
    'multipart/mixed;boundary="-"',
    'text/event-stream',
    // Apollo Client 4's GraphQL17Alpha9Handler: the current format.
    'multipart/mixed;incrementalSpec=v0.2,application/graphql-response+json,application/json;q=0.9',
  ])('takes %s', (accept) => expect(accepting(accept)).toBe(true));

  it.each([
    'application/json',
    'application/graphql-response+json, application/json',
    // A format not served.
    'multipart/mixed;incrementalSpec=v0.3',
    // Apollo's multipart subscriptions alone.
    'multipart/mixed;boundary="graphql";subscriptionSpec=1.0',
    '*/*',
  ])('does not take %s', (accept) => expect(accepting(accept)).toBe(false));
});

describe('deliversIncrementally', () => {
  it('sees @defer on inline fragments and fragment spreads', () => {
    expect(deliversIncrementally(parse('{ product(id: "p") { id ... @defer { name } } }'))).toBe(true);
    expect(deliversIncrementally(parse('{ product(id: "p") { id ...F @defer } } fragment F on Product { name }'))).toBe(true);
    expect(deliversIncrementally(parse('{ product(id: "p") { id name } }'))).toBe(false);
  });

  it('sees @stream on list fields', () => {
    expect(deliversIncrementally(parse('{ products(limit: 3) @stream(initialCount: 1) { id } }'))).toBe(true);
    expect(deliversIncrementally(parse('query ($s: Boolean!) { products(limit: 3) @stream(if: $s) { id } }'), { s: false })).toBe(false);
  });

  it('takes `if` into account, literal or by variable (true when the variable is absent: the default)', () => {
    const byVariable = parse('query ($later: Boolean!) { product(id: "p") { id ... @defer(if: $later) { name } } }');
    expect(deliversIncrementally(parse('{ product(id: "p") { id ... @defer(if: false) { name } } }'))).toBe(false);
    expect(deliversIncrementally(byVariable, { later: false })).toBe(false);
    expect(deliversIncrementally(byVariable, { later: true })).toBe(true);
    expect(deliversIncrementally(byVariable, {})).toBe(true);
  });
});
