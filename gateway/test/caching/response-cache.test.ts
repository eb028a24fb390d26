// What a whole response depends on: objects may be known only by an interface or union, or have no ID, and a write
// must still reach every response holding them; and the response cache's key.
import { buildSchema } from 'graphql';
import { describe, expect, it } from 'vitest';
import { defaultBuildResponseCacheKey } from '@envelop/response-cache';
import { responseDependencies } from '../../src/caching/generations.js';
import { responseCacheKey } from '../../src/caching/response-cache.js';

const schema = buildSchema(/* GraphQL */ `
  type Query { node(id: ID!): Node search: [Result!]! }
  type Mutation { touch: Product }
  interface Node { id: ID! }
  type Product implements Node { id: ID! name: String }
  type User implements Node { id: ID! }
  type Review { body: String }
  union Result = Product | Review
`);

describe('the generations a response depends on', () => {
  it('are each object’s own, by every type an interface or union may stand for', () => {
    expect(responseDependencies(schema, [{ typename: 'Node', id: 'p1' }], []).sort()).toEqual(
      ['e:Product:p1', 'e:User:p1', 'p:Product', 'p:User', 't:Product', 't:User'].sort(),
    );
  });

  it('are any write of its type for an object with no ID known, and for the types a root list returns', () => {
    expect(responseDependencies(schema, [{ typename: 'Product' }], [])).toContain('r:Product');
    expect(responseDependencies(schema, [{ typename: 'Product', id: 'p1' }], [])).not.toContain('r:Product');
    expect(responseDependencies(schema, [], ['Result']).sort()).toEqual(['p:Product', 'p:Review', 'r:Product', 'r:Review', 't:Product', 't:Review'].sort());
  });

  it('name no root type and no scalar', () => {
    expect(responseDependencies(schema, [{ typename: 'Query' }, { typename: 'String' }], ['Mutation'])).toEqual([]);
  });

  it('are every write for a root field that answers no object (a count, a flag): no write names it', () => {
    expect(responseDependencies(schema, [], [], true)).toEqual(['v:']);
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
