// Foreign federation shapes (@interfaceObject, @provides, null keys, node(id), @requires, unions, @override) through
// our gateway for every kind of caller and through the bare Hive Gateway runtime: all must give the answer written by
// hand, and the response cache must not change what an anonymous caller's query asks of the subgraphs. Deferred whole
// (the JavaScript planner's path), each query must add up, part by part, to the same answer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assembled, partsOf, token } from '@ordergraph/testkit';
import { Kind, parse, print, visit } from 'graphql';
import { answer, serveShape, type ServedShape } from './federation-shapes/harness.js';
import { SHAPES } from './federation-shapes/shapes.js';

let tokens: { ADMIN: string; USER: string };
beforeAll(async () => {
  tokens = { ADMIN: await token('ADMIN', 'user-0000'), USER: await token('USER', 'user-0001') };
});

/** The query with its whole selection deferred: `{ ... @defer { <the query's selections> } }`. */
const deferredWhole = (query: string): string =>
  print(
    visit(parse(query), {
      OperationDefinition: (node) => ({
        ...node,
        selectionSet: {
          kind: Kind.SELECTION_SET,
          selections: [{ kind: Kind.INLINE_FRAGMENT, directives: [{ kind: Kind.DIRECTIVE, name: { kind: Kind.NAME, value: 'defer' } }], selectionSet: node.selectionSet }],
        },
      }),
    }),
  );

/** The same comparison for an answer in parts (the current format), put back together. */
async function answerInParts(url: string, query: string, bearer?: string) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'multipart/mixed;incrementalSpec=v0.2', ...(bearer ? { authorization: `Bearer ${bearer}` } : {}) },
    body: JSON.stringify({ query }),
  });
  const parts = partsOf(response.headers.get('content-type'), await response.text());
  expect(parts.length).toBeGreaterThan(1);
  const { data, errors } = assembled(parts);
  return { data, errorCodes: errors.map((error) => error.extensions?.['code'] as unknown) };
}

/** The operations each subgraph received since the last call, each subgraph's in order of arrival. */
function take(served: ServedShape): Record<string, string[]> {
  const taken: Record<string, string[]> = {};
  for (const [name, calls] of served.received) taken[name] = calls.splice(0);
  return taken;
}

for (const shape of SHAPES) {
  describe(shape.name, () => {
    let served: ServedShape;
    beforeAll(async () => {
      served = await serveShape(shape);
    });
    afterAll(async () => {
      await served?.stop();
    });

    for (const { query, data, errorCodes = [] } of shape.queries) {
      it(query, async () => {
        const expected = { data, errorCodes };
        take(served);
        const admin = await answer(served.gateway, query, tokens.ADMIN);
        const adminCalls = take(served);
        const anonymous = await answer(served.gateway, query);
        const anonymousCalls = take(served);
        const user = await answer(served.gateway, query, tokens.USER);
        const runtime = await answer(served.runtime, query);

        expect({ runtime }).toEqual({ runtime: expected });
        expect({ admin }).toEqual({ admin: expected });
        expect({ user }).toEqual({ user: expected });
        expect({ anonymous }).toEqual({ anonymous: expected });
        // No @cacheControl here, so nothing is cached: the anonymous query asks exactly what the administrator's did.
        expect(anonymousCalls).toEqual(adminCalls);
        expect(Object.values(adminCalls).flat().length).toBeGreaterThan(0);
      });

      it(`${query}, deferred whole`, async () => {
        const deferred = deferredWhole(query);
        const expected = { data, errorCodes };
        for (const bearer of [undefined, tokens.USER, tokens.ADMIN]) expect(await answerInParts(served.gateway, deferred, bearer)).toEqual(expected);
      });
    }
  });
}

describe('a document that explodes only when its fragments are expanded, on a supergraph of other shapes', () => {
  let served: ServedShape;
  beforeAll(async () => {
    served = await serveShape(SHAPES[0]!);
  });
  afterAll(async () => {
    await served?.stop();
  });

  it('is refused for every caller before any subgraph is asked', async () => {
    const levels = 40;
    const fragments = Array.from({ length: levels }, (_, i) => `fragment f${i} on Query { ...f${i + 1} ...f${i + 1} }`).join(' ');
    const bomb = `{ ...f0 } ${fragments} fragment f${levels} on Query { __typename }`;
    take(served);
    for (const bearer of [undefined, tokens.USER, tokens.ADMIN]) {
      expect(await answer(served.gateway, bomb, bearer)).toEqual({ data: undefined, errorCodes: ['FIELD_LIMIT_EXCEEDED'] });
    }
    expect(Object.values(take(served)).flat()).toEqual([]);
  });

  it('is refused the same when every spread is deferred and the answer may come in parts', async () => {
    const levels = 40;
    const fragments = Array.from({ length: levels }, (_, i) => `fragment f${i} on Query { ...f${i + 1} @defer ...f${i + 1} @defer }`).join(' ');
    const bomb = `{ ...f0 @defer } ${fragments} fragment f${levels} on Query { __typename }`;
    take(served);
    for (const bearer of [undefined, tokens.USER, tokens.ADMIN]) {
      const response = await fetch(served.gateway, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'multipart/mixed;incrementalSpec=v0.2', ...(bearer ? { authorization: `Bearer ${bearer}` } : {}) },
        body: JSON.stringify({ query: bomb }),
      });
      const { errors } = assembled(partsOf(response.headers.get('content-type'), await response.text()));
      expect(errors.map((error) => error.extensions?.['code'])).toEqual(['FIELD_LIMIT_EXCEEDED']);
    }
    expect(Object.values(take(served)).flat()).toEqual([]);
  });
});

describe('a wide answer on a supergraph of other shapes: the same entities at hundreds of paths, past 16 KiB', () => {
  const ALIASES = 300;
  let served: ServedShape;
  beforeAll(async () => {
    // The @interfaceObject shape, with room for the aliases: every path's accounts are completed by the other subgraph.
    served = await serveShape(SHAPES[0]!, { MAX_ALIASES: String(ALIASES), MAX_FIELDS: '10000', MAX_COMPLEXITY: '1000000', MAX_TOKENS: '50000' });
  });
  afterAll(async () => {
    await served?.stop();
  });

  it('is answered whole and alike for every caller and by the bare engine', async () => {
    const selection = 'accounts { __typename id name level ... on Admin { isMain } ... on Regular { isActive } }';
    const query = `{ ${Array.from({ length: ALIASES }, (_, i) => `a${i}: ${selection}`).join(' ')} }`;
    const accounts = [
      { __typename: 'Admin', id: 'a1', name: 'Ada', level: 9, isMain: true },
      { __typename: 'Regular', id: 'r1', name: 'Rob', level: 2, isActive: false },
    ];
    const expected = { data: Object.fromEntries(Array.from({ length: ALIASES }, (_, i) => [`a${i}`, accounts])), errorCodes: [] };
    expect(JSON.stringify(expected.data).length).toBeGreaterThan(16 * 1024);
    expect({ runtime: await answer(served.runtime, query) }).toEqual({ runtime: expected });
    for (const bearer of [undefined, tokens.USER, tokens.ADMIN]) expect(await answer(served.gateway, query, bearer)).toEqual(expected);
  });
});
