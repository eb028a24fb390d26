// Apollo's cache-hint rules as the gateway reads them, on a small schema: defaults, inheritance, type hints, scopes.
import { buildSchema, parse, getOperationAST } from 'graphql';
import { describe, expect, it } from 'vitest';
import { cacheControlHeader, cacheHints, cachePolicy } from '../../src/caching/cache-control.js';

const schema = buildSchema(`
  enum CacheControlScope { PUBLIC PRIVATE }
  directive @cacheControl(maxAge: Int, scope: CacheControlScope, inheritMaxAge: Boolean) on FIELD_DEFINITION | OBJECT | INTERFACE | UNION
  type Query {
    product(id: ID!): Product @cacheControl(maxAge: 300)
    products: [Product!]!
    shelf: Shelf
    me: Account @cacheControl(maxAge: 30, scope: PRIVATE)
  }
  type Mutation { touch: Product }
  type Product { id: ID! name: String! @cacheControl(maxAge: 3600) price: Float! currentPrice: Float! @cacheControl(maxAge: 60) related: Product }
  type Shelf @cacheControl(maxAge: 120) { label: String }
  type Account { email: String }
`);
const hints = cacheHints(schema);
const policy = (query: string) => {
  const document = parse(query);
  return cachePolicy(schema, hints, { document, operation: getOperationAST(document)! });
};

describe('cache hints', () => {
  it('give root fields and fields returning objects maxAge 0 unless hinted; scalars inherit', () => {
    expect(policy('{ product(id: 1) { id name price } }')).toEqual({ maxAge: 300, scope: 'PUBLIC' });
    expect(policy('{ product(id: 1) { name currentPrice } }')).toEqual({ maxAge: 60, scope: 'PUBLIC' });
    expect(policy('{ products { name } }').maxAge).toBe(0);
    expect(policy('{ product(id: 1) { related { id } } }').maxAge).toBe(0);
    expect(policy('{ __typename }').maxAge).toBe(0);
    expect(policy('{ __schema { queryType { name } } }').maxAge).toBe(0);
  });

  it('apply a type’s own hint to the fields returning it, and carry PRIVATE scopes', () => {
    expect(policy('{ shelf { label } }')).toEqual({ maxAge: 120, scope: 'PUBLIC' });
    expect(policy('{ me { email } }')).toEqual({ maxAge: 30, scope: 'PRIVATE' });
  });

  it('never cache a mutation', () => {
    expect(policy('mutation { touch { name } }').maxAge).toBe(0);
  });
});

describe('the Cache-Control header', () => {
  it('is public for anonymous PUBLIC responses, private for a token or a PRIVATE hint, no-store at 0', () => {
    expect(cacheControlHeader({ maxAge: 60, scope: 'PUBLIC' }, false)).toBe('public, max-age=60');
    expect(cacheControlHeader({ maxAge: 60, scope: 'PUBLIC' }, true)).toBe('private, max-age=60');
    expect(cacheControlHeader({ maxAge: 30, scope: 'PRIVATE' }, false)).toBe('private, max-age=30');
    expect(cacheControlHeader({ maxAge: 0, scope: 'PUBLIC' }, false)).toBe('no-store');
    expect(cacheControlHeader(undefined, false)).toBe('no-store');
  });
});
