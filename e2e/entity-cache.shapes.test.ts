// The foreign federation shapes (@interfaceObject, @provides, null keys, node(id), @requires, unions, @override) with
// the entity cache on and every fetch made cacheable and shared: each answer, cold and then warm, is still the one
// written by hand, for every kind of caller.
import { Kind, parse } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphql, readCounter, token } from '@ordergraph/testkit';
import { serveShape, type ServedShape } from './federation-shapes/harness.js';
import { SHAPES } from './federation-shapes/shapes.js';

let tokens: { ADMIN: string; USER: string };
beforeAll(async () => {
  tokens = { ADMIN: await token('ADMIN', 'user-0000'), USER: await token('USER', 'user-0001') };
});

async function answer(url: string, query: string, bearer?: string) {
  const { body } = await graphql(url, query, bearer ? { token: bearer } : {});
  return { data: body.data, errorCodes: (body.errors ?? []).map((error) => error.extensions?.['code'] as unknown) };
}

/** A minute for every type of every subgraph of the shape (these have no hints), each subgraph answering all alike. */
function everythingCached(shape: (typeof SHAPES)[number]): Record<string, string> {
  const ttls = shape.subgraphs.flatMap(({ name, typeDefs }) =>
    parse(typeDefs).definitions.flatMap((definition) =>
      definition.kind === Kind.OBJECT_TYPE_DEFINITION || definition.kind === Kind.OBJECT_TYPE_EXTENSION ? [`${name}.${definition.name.value}=60`] : [],
    ),
  );
  return { ENTITY_CACHE: 'on', ENTITY_CACHE_TTLS: [...new Set(ttls)].join(','), ENTITY_CACHE_SHARED_SUBGRAPHS: shape.subgraphs.map(({ name }) => name).join(',') };
}

for (const shape of SHAPES) {
  describe(`${shape.name}, entity cache on`, () => {
    let served: ServedShape;
    beforeAll(async () => {
      served = await serveShape(shape, everythingCached(shape));
    });
    afterAll(async () => {
      await served?.stop();
    });

    for (const { query, data, errorCodes = [] } of shape.queries) {
      it(query, async () => {
        const expected = { data, errorCodes };
        for (const round of ['cold', 'warm']) {
          for (const [who, bearer] of [['admin', tokens.ADMIN], ['user', tokens.USER], ['anonymous', undefined]] as const) {
            expect({ round, who, answer: await answer(served.gateway, query, bearer) }).toEqual({ round, who, answer: expected });
          }
        }
      });
    }

    it('served the warm answers from the cache', async () => {
      const lookups = (result: string) => readCounter(served.gateway.replace(/\/graphql$/, '/metrics'), 'gateway_entity_cache_lookups_total', { result });
      expect(await lookups('hit')).toBeGreaterThan(0);
      expect(await lookups('unavailable')).toBe(0);
    });
  });
}
