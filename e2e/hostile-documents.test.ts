// Documents written by an attacker, against the gateway as a separate process in development and in production, for an
// anonymous and a signed-in caller: each is refused with its own code at 400 before anything expands it, and a
// `{ __typename }` sent while it is in flight is answered as quickly as when the gateway is idle. Before the document
// shape was measured in one pass, the 30-level fragment bomb below held the gateway's event loop for minutes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphql, token } from '@ordergraph/testkit';
import { startProcessSupergraph, type ProcessSupergraph } from '@ordergraph/testkit/e2e';

const SECRET = 'hostile-documents-secret-of-32-characters';
const SIGNING_SECRET = 'hostile-documents-signing-secret-00000000';

/** `levels` fragments, each spreading the next twice: 2^levels selections of `leaf` once expanded, in about 60 bytes a level. */
function fragmentBomb(levels: number, { on = 'Query', root = '...f0', leaf = '__typename' } = {}): string {
  const fragments = Array.from({ length: levels }, (_, i) => `fragment f${i} on ${on} { ...f${i + 1} ...f${i + 1} }`);
  return `{ ${root} } ${fragments.join(' ')} fragment f${levels} on ${on} { ${leaf} }`;
}

const nested = (levels: number, open: string, close: string, inner: string) => `${open.repeat(levels)}${inner}${close.repeat(levels)}`;

/** Each document, the code it is refused with, and its variables. */
const DOCUMENTS: [name: string, query: string, code: string, variables?: Record<string, unknown>][] = [
  ['a fragment bomb of 2^30 selections', fragmentBomb(30), 'FIELD_LIMIT_EXCEEDED'],
  ['a fragment bomb of 2^60 selections', fragmentBomb(60), 'FIELD_LIMIT_EXCEEDED'],
  ['a fragment bomb under a list field', fragmentBomb(30, { on: 'Product', root: 'products(limit: 1) { ...f0 }' }), 'FIELD_LIMIT_EXCEEDED'],
  ['a fragment bomb with an alias at each level', fragmentBomb(30, { leaf: 'a: __typename' }).replace(/\{ \.\.\.f(\d+) /g, '{ a$1: __typename ...f$1 '), 'ALIAS_LIMIT_EXCEEDED'],
  ['a fragment bomb spread in many operations', `${Array.from({ length: 50 }, (_, i) => `query q${i} { ...f0 }`).join(' ')} ${fragmentBomb(30).replace('{ ...f0 } ', '')}`, 'FIELD_LIMIT_EXCEEDED'],
  ['a list literal nested 2,000 levels', `{ __typename(a: ${nested(2000, '[', ']', '1')}) }`, 'NESTING_LIMIT_EXCEEDED'],
  ['an object literal nested 2,000 levels', `{ __typename(a: ${nested(2000, '{ a: ', ' }', '1')}) }`, 'NESTING_LIMIT_EXCEEDED'],
  ['selection sets nested 2,000 levels', `{ ${nested(2000, 'user { ', ' }', 'id')} }`, 'NESTING_LIMIT_EXCEEDED'],
  ['a variable type nested 2,000 levels', `query ($a: ${nested(2000, '[', ']', 'Int')}) { __typename }`, 'NESTING_LIMIT_EXCEEDED'],
  ['variables nested 2,000 levels', 'query ($a: Int) { __typename }', 'VARIABLES_LIMIT_EXCEEDED', { a: JSON.parse(nested(2000, '[', ']', '1')) }],
  ['a field name of 100,000 characters', `{ ${'a'.repeat(100_000)} }`, 'GRAPHQL_VALIDATION_FAILED'],
];

/** The test kit's POST, timed. */
async function post(url: string, query: string, options: { variables?: Record<string, unknown> | undefined; token?: string | undefined } = {}) {
  const started = performance.now();
  const { status, body } = await graphql(url, query, { ...(options.variables ? { variables: options.variables } : {}), ...(options.token ? { token: options.token } : {}) });
  return { status, body, ms: performance.now() - started };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

describe.each([
  ['development', { NODE_ENV: 'development' }],
  ['production', { NODE_ENV: 'production', SUBGRAPH_SIGNING_SECRET: SIGNING_SECRET }],
])('in %s', (_mode, modeEnv) => {
  let supergraph: ProcessSupergraph;
  let user: string;
  let idle: number;

  beforeAll(async () => {
    supergraph = await startProcessSupergraph({ env: { ...modeEnv, JWT_SECRET: SECRET, SHUTDOWN_DELAY: '0' } });
    user = await token('USER', 'user-0001', { secret: SECRET });
    const probes: number[] = [];
    for (let i = 0; i < 7; i++) probes.push((await post(supergraph.url, '{ __typename }')).ms);
    idle = median(probes);
  }, 180_000);
  afterAll(async () => {
    await supergraph?.stop();
  });

  describe.each([
    ['anonymous', () => undefined],
    ['signed in', () => user],
  ])('%s', (_caller, caller) => {
    it.each(DOCUMENTS)('%s: refused with its code, the gateway answering others meanwhile', async (_name, query, code, variables) => {
      const attack = post(supergraph.url, query, { variables, token: caller() });
      await new Promise((resolve) => setTimeout(resolve, 200));
      const probe = await post(supergraph.url, '{ __typename }', { token: caller() });
      const refused = await attack;
      expect(refused.status).toBe(400);
      expect(refused.body.data).toBeUndefined();
      expect(refused.body.errors?.map((error) => error.extensions?.code)).toEqual([code]);
      expect(probe.body).toEqual({ data: { __typename: 'Query' } });
      // A ratio to the idle gateway, with a floor for a busy CI machine: a held event loop shows as seconds.
      expect(probe.ms).toBeLessThan(Math.max(20 * idle, 1_000));
    });
  });
});
