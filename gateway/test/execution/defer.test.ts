// Which requests get @defer and @stream answered in parts, which documents deliver anything later, and where a @defer is
// served: the decisions defer.ts makes before any subgraph is called.
import { describe, expect, it } from 'vitest';
import { buildASTSchema, parse, print } from 'graphql';
import { acceptsIncremental, deliversIncrementally, deferrableTypesOf, withServableDefers } from '../../src/execution/defer.js';

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

describe('withServableDefers', () => {
  // A supergraph's shape: Order an entity of orders, LineItem and the result union no entity, Product's key
  // resolvable in catalog only.
  const sdl = `
    type Query { order(id: ID!): Order node(id: ID!): Node }
    type Mutation { cancel(id: ID!): Result! }
    interface Node { id: ID! }
    type Order implements Node @join__type(graph: ORDERS, key: "id") { id: ID! status: String! items: [LineItem!]! }
    type LineItem @join__type(graph: ORDERS) { quantity: Int! product: Product! }
    type Product implements Node @join__type(graph: CATALOG, key: "id") @join__type(graph: ORDERS, key: "id", resolvable: false) { id: ID! name: String! }
    type Refused @join__type(graph: ORDERS) { message: String! }
    union Result = Order | Refused
    interface Priced { price: Float! }
    type Quote implements Priced @join__type(graph: ORDERS) { price: Float! }
  `;
  const schema = buildASTSchema(parse(sdl), { assumeValidSDL: true });
  const deferrable = deferrableTypesOf(sdl, schema);
  const served = (document: string) => print(withServableDefers(schema, parse(document), deferrable));

  it('takes the query root, the object types some subgraph resolves by a key and the interfaces of only those as deferrable', () => {
    expect([...deferrable].sort()).toEqual(['Node', 'Order', 'Product', 'Query']);
  });

  it('keeps @defer in the query root, in entities and in interfaces of entities', () => {
    for (const document of [
      '{ ... @defer { order(id: "o") { id } } }',
      '{ order(id: "o") { id ... @defer { status } } }',
      '{ order(id: "o") { items { product { id ...P @defer } } } } fragment P on Product { name }',
      '{ node(id: "o") { id ... on Order @defer { status } } }',
    ]) {
      expect(served(document)).toBe(print(parse(document)));
    }
  });

  it('drops @defer where no key fetches the fragment again: a value type, a union; the fragment stays', () => {
    expect(served('{ order(id: "o") { id items { ... @defer { quantity } } } }')).toBe(print(parse('{ order(id: "o") { id items { ... { quantity } } } }')));
    expect(served('mutation { cancel(id: "o") { ... on Refused { ... @defer { message } } ... on Order @defer { status } } }')).toBe(
      print(parse('mutation { cancel(id: "o") { ... on Refused { ... { message } } ... on Order { status } } }')),
    );
    expect(served('mutation { cancel(id: "o") { ...O @defer } } fragment O on Order { status }')).toBe(print(parse('mutation { cancel(id: "o") { ...O } } fragment O on Order { status }')));
  });

  it('leaves a document alone when the schema is not one it knows, or it has no @defer', () => {
    const document = parse('{ order(id: "o") { items { ... @defer { quantity } } } }');
    expect(withServableDefers(schema, document)).toBe(document);
    const plain = parse('{ order(id: "o") { id } }');
    expect(withServableDefers(schema, plain, deferrable)).toBe(plain);
  });
});
