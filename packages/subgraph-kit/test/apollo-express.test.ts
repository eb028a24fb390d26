// The query string Apollo Server is handed: the same parameters url.parse (what @as-integrations/express5 used) gives.
import { parse } from 'node:url';
import { describe, expect, it } from 'vitest';
import { searchOf } from '../src/apollo-express.js';

const params = (search: string) => [...new URLSearchParams(search)];

describe('searchOf', () => {
  it.each([
    '/',
    '/?',
    '/?query=%7B__typename%7D',
    '/?query={user(id:"1"){id}}&variables={"a":1}',
    "/?query=a'b\\c^d`e|f",
    '/?a=1&a=2&b=',
    '/?a=1#fragment',
    '/#fragment?not=query',
    '/path?x=1?y=2',
    '',
  ])('reads %j as url.parse does', (target) => {
    // url.parse escapes some characters it leaves as they are; both decode to the same parameters.
    expect(params(searchOf(target))).toEqual(params(parse(target).search ?? ''));
    expect(searchOf(target) === '').toBe((parse(target).search ?? '') === '');
  });
});
