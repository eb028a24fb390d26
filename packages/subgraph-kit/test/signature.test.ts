// Signatures of subgraph operations: what our subgraphs check is exactly what Hive Gateway's own signing plugin
// writes (its useHmacUpstreamSignature, run here on a real execution request), and nothing else passes.
import { useHmacUpstreamSignature } from '@graphql-mesh/hmac-upstream-signature';
import { parse, print, stripIgnoredCharacters } from 'graphql';
import { describe, expect, it } from 'vitest';
import { signedQueryJson } from '@ordergraph/core';
import { SIGNATURE_EXTENSION, isSignedWith, signOperation } from '../src/signature.js';

const SECRET = 'signature-test-secret-of-32-characters!';
const QUERY = 'query ($r: [_Any!]!) { _entities(representations: $r) { ... on Product { id currentPrice } } }';
/** A query whose text JSON escapes: quotes, a backslash, a line separator and characters beyond ASCII in a literal. */
const QUERY_WITH_ESCAPES = '{ search(text: "é \\"quoted\\" \\\\ \u2028 😀") { __typename } }';

/** What the gateway puts in a subgraph request's extensions for `query` and `variables`. */
async function signedByTheGateway(query: string, variables?: Record<string, unknown>) {
  const plugin = useHmacUpstreamSignature({ secret: SECRET });
  const quiet = { debug() {}, child: () => quiet };
  plugin.onYogaInit!({ yoga: { fetchAPI: globalThis } } as never);
  const executionRequest: { document: ReturnType<typeof parse>; variables?: Record<string, unknown>; extensions?: Record<string, unknown> } = {
    document: parse(query),
    ...(variables ? { variables } : {}),
  };
  await plugin.onSubgraphExecute!({ subgraphName: 'catalog', subgraph: {}, executionRequest, log: quiet } as never);
  // The query as Hive's HTTP and WebSocket transports send it (executor-common's defaultPrintFn).
  return { query: stripIgnoredCharacters(print(executionRequest.document)), ...(variables ? { variables } : {}), extensions: executionRequest.extensions };
}

describe('subgraph operation signatures', () => {
  it("accepts what Hive Gateway's signing plugin sends: with and without variables, keys in any order, any characters", async () => {
    const variables = [
      { r: [{ __typename: 'Product', id: 'UHJvZHVjdDox' }] },
      undefined,
      {},
      // Keys out of order at every depth, and values JSON escapes: the signed text sorts and escapes as Hive's does.
      { z: { b: [1, 2.5, -0, null, true], a: 'é "quoted" \\ \n \u2028 😀' }, a: [{ y: null, x: {} }, []], 'ü': 1e21, B: 'b' },
      // Keys in order at every depth (written by JSON.stringify at once), with the same values and a lone surrogate.
      { B: 'b', a: [{ x: {}, y: null }, []], n: [1, 2.5, -0, null, true, 1e21, NaN], r: [{ __typename: 'Product', id: 'é "quoted" \\ \n \u2028 😀 \ud800' }] },
      // Integer-like keys, which objects enumerate in numeric order (9 before 10), and a value with toJSON.
      { '1': 'one', '10': 'ten', '9': 'nine', at: new Date(0) },
    ];
    for (const [query, given] of [...variables.map((given) => [QUERY, given] as const), [QUERY_WITH_ESCAPES, variables[0]] as const]) {
      const sent = await signedByTheGateway(query, given);
      expect(sent.extensions?.[SIGNATURE_EXTENSION]).toBe(signOperation(SECRET, sent));
      // The gateway keeps each query's signed text (signedQueryJson) and signs with it.
      expect(signOperation(SECRET, { queryJson: signedQueryJson(sent.query), ...(given ? { variables: given } : {}) })).toBe(sent.extensions?.[SIGNATURE_EXTENSION]);
      expect(isSignedWith(SECRET, sent)).toBe(true);
    }
  });

  it('refuses a missing, foreign, lifted or tampered signature', async () => {
    const sent = await signedByTheGateway(QUERY, { r: [] });
    expect(isSignedWith(SECRET, { query: sent.query, variables: sent.variables })).toBe(false);
    expect(isSignedWith('another-secret-of-at-least-32-characters', sent)).toBe(false);
    expect(isSignedWith(SECRET, { ...sent, query: '{ _service { sdl } }' })).toBe(false);
    expect(isSignedWith(SECRET, { ...sent, variables: { r: [{ __typename: 'Product', id: 'x' }] } })).toBe(false);
    expect(isSignedWith(SECRET, { ...sent, extensions: { [SIGNATURE_EXTENSION]: 'AAAA' } })).toBe(false);
    expect(isSignedWith(SECRET, { ...sent, variables: ['not', 'an', 'object'] })).toBe(false);
    expect(isSignedWith(SECRET, {})).toBe(false);
    // A body that is not an object at all: a batch, a string, JSON's null.
    for (const body of [[sent], JSON.stringify(sent), null, undefined]) expect(isSignedWith(SECRET, body)).toBe(false);
  });
});
