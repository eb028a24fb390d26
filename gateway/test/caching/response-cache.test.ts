// The response cache's entity index: entities read from a result without the cache's own fields may be known only by
// an interface or union, or have no ID, and an invalidation must still reach every response holding them.
import { buildSchema } from 'graphql';
import { describe, expect, it } from 'vitest';
import { defaultBuildResponseCacheKey } from '@envelop/response-cache';
import { createInMemoryCache } from '@graphql-yoga/plugin-response-cache';
import { indexingEntities, responseCacheKey } from '../../src/caching/response-cache.js';

const schema = buildSchema(/* GraphQL */ `
  type Query { node(id: ID!): Node search: [Result!]! }
  type Mutation { touch: Product }
  interface Node { id: ID! }
  type Product implements Node { id: ID! name: String }
  type User implements Node { id: ID! }
  type Review { body: String }
  union Result = Product | Review
`);

/** A cache holding one response per entity list given, named by its key. */
function filled(responses: Record<string, { typename: string; id?: string }[]>) {
  const cache = indexingEntities(createInMemoryCache(), () => schema);
  for (const [key, entities] of Object.entries(responses)) cache.set(key, { data: { key } }, entities, 60_000);
  const kept = () => Object.keys(responses).filter((key) => cache.get(key) !== null);
  return { cache, kept };
}

describe('the response cache index', () => {
  it('drops a response holding an interface or union by any of its types', () => {
    const { cache, kept } = filled({
      node: [{ typename: 'Node', id: 'p1' }],
      search: [{ typename: 'Result#unidentified', id: '?' }],
      user: [{ typename: 'User', id: 'u1' }],
    });
    cache.invalidate([{ typename: 'Product', id: 'p1' }]);
    expect(kept()).toEqual(['user']);
  });

  it('drops a response holding a type with no ID known on any change to that type, and only to that type', () => {
    const { cache, kept } = filled({ nameOnly: [{ typename: 'Product#unidentified', id: '?' }], other: [{ typename: 'Product', id: 'p2' }] });
    cache.invalidate([{ typename: 'User', id: 'u1' }]);
    expect(kept()).toEqual(['nameOnly', 'other']);
    cache.invalidate([{ typename: 'Product', id: 'p9' }]);
    expect(kept()).toEqual(['other']);
  });

  it('drops every response holding a type a mutation returned without its ID', () => {
    const { cache, kept } = filled({ one: [{ typename: 'Product', id: 'p1' }], two: [{ typename: 'Node', id: 'p2' }], user: [{ typename: 'User', id: 'u1' }] });
    cache.invalidate([{ typename: 'Product#unidentified', id: '?' }]);
    expect(kept()).toEqual(['user']);
  });

  it('indexes no root type and no scalar: a mutation naming them drops nothing', () => {
    const { cache, kept } = filled({ product: [{ typename: 'Query' }, { typename: 'String' }, { typename: 'Product', id: 'p1' }] });
    cache.invalidate([{ typename: 'Query' }, { typename: 'Mutation' }, { typename: 'String' }]);
    expect(kept()).toEqual(['product']);
  });
});

describe('the response cache key', () => {
  it("is upstream's key, so replicas of either build share entries, computed without waiting", async () => {
    const params = {
      documentString: 'query Product($id: ID!, $at: Int) { product(id: $id) { id name } }',
      operationName: 'Product',
      // Keys in another order and a nested object: the variables are hashed with their keys sorted.
      variableValues: { at: 3, id: 'UHJvZHVjdDpwcm9kdWN0LTAwMDE', filter: { b: [1, 2], a: 'ü' } },
      sessionId: null,
      request: new Request('http://gateway/graphql'),
      context: {},
    };
    const ours = responseCacheKey(params);
    expect(typeof ours).toBe('string');
    expect(ours).toBe(await defaultBuildResponseCacheKey(params));
    expect(responseCacheKey({ ...params, variableValues: { ...params.variableValues, at: 4 } })).not.toBe(ours);
  });
});
