// The document's shape, measured without expanding it: fragments spread many times are measured once, brackets are
// counted outside strings and comments, and neither walk recurses on what the client nests.
import { getIntrospectionQuery, parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { bracketNesting, expandedSizes } from '../../src/limits/document-shape.js';

/** `{ ...f0 }` where each of `levels` fragments spreads the next twice: 2^levels `__typename`s once expanded. */
const fragmentBomb = (levels: number, leaf = '__typename') =>
  `{ ...f0 } ${Array.from({ length: levels }, (_, i) => `fragment f${i} on Query { ...f${i + 1} ...f${i + 1} }`).join(' ')} fragment f${levels} on Query { ${leaf} }`;

describe('expandedSizes', () => {
  it('counts every field, alias and level as if each fragment spread were written out', () => {
    const document = parse(`
      query A { a: product { id ...P } ... on Query { products { ...P } } }
      query B { __typename }
      fragment P on Product { name price: currentPrice owner { id } }`);
    // A: product 1 + id 1 + P 4, products 1 + P 4; P: name, price, owner, owner.id
    expect(expandedSizes(document)).toEqual([
      { fields: 11, aliases: 3, depth: 3 },
      { fields: 1, aliases: 0, depth: 1 },
    ]);
  });

  it('measures a fragment bomb of 2^60 selections without expanding it', () => {
    const [size] = expandedSizes(parse(fragmentBomb(60)));
    expect(size).toEqual({ fields: 2 ** 60, aliases: 0, depth: 1 });
    expect(expandedSizes(parse(fragmentBomb(40, 'a: __typename')))[0]!.aliases).toBe(2 ** 40);
  });

  it('ends on fragment cycles and unknown fragments, which validation reports', () => {
    expect(expandedSizes(parse('{ ...a } fragment a on Query { x ...b } fragment b on Query { y ...a ...missing }'))).toEqual([{ fields: 2, aliases: 0, depth: 1 }]);
  });

  it('leaves introspection subtrees out of the depth, not out of the fields', () => {
    const [size] = expandedSizes(parse(getIntrospectionQuery()));
    expect(size!.depth).toBe(0);
    expect(size!.fields).toBeGreaterThan(100);
  });
});

describe('bracketNesting', () => {
  it('counts selection sets, argument lists, lists and objects', () => {
    expect(bracketNesting('{ a(x: [{ y: [1] }]) { b } }', 100)).toBe(5);
    expect(bracketNesting('query ($v: [[Int]]) { a }', 100)).toBe(3);
  });

  it('skips brackets in strings, block strings (with escaped quotes) and comments', () => {
    expect(bracketNesting('{ a(x: "[[[{\\"[[", y: """ [[[ \\""" {{{ """) # [[[[[[\n { b } }', 100)).toBe(2);
  });

  it('stops past the limit, so a huge nesting costs no more than the limit', () => {
    expect(bracketNesting(`{ a(x: ${'['.repeat(1_000_000)}`, 64)).toBe(65);
  });
});
