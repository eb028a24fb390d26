// What POST /cache/invalidate accepts (our bodies and Apollo Router's) and whom it serves.
import { describe, expect, it } from 'vitest';
import { INVALIDATION_KEY_HEADER, parseInvalidations, refusal } from '../../src/caching/invalidation-endpoint.js';

const knownType = (name: string) => ['Product', 'User'].includes(name);

describe('the invalidations a body asks for', () => {
  it('takes ours and Apollo Router’s, alone or in an array', () => {
    expect(parseInvalidations({}, knownType)).toEqual([{ kind: 'everything' }]);
    expect(parseInvalidations({ type: 'Product' }, knownType)).toEqual([{ kind: 'type', type: 'Product' }]);
    expect(parseInvalidations({ type: 'Product', id: 'p1' }, knownType)).toEqual([{ kind: 'entity', type: 'Product', id: 'p1' }]);
    expect(
      parseInvalidations(
        [
          { kind: 'type', subgraph: 'catalog', type: 'Product' },
          { kind: 'entity', subgraph: 'users', type: 'User', key: { id: 'u1' } },
        ],
        knownType,
      ),
    ).toEqual([
      { kind: 'type', type: 'Product' },
      { kind: 'entity', type: 'User', id: 'u1' },
    ]);
  });

  it('says what is wrong with anything else', () => {
    for (const body of [[], null, 'Product', { type: 'Unknown' }, { id: 'p1' }, { kind: 'subgraph', type: 'Product' }, { kind: 'entity', type: 'Product', key: { sku: 'x', id: 'y' } }, { type: 'Product', id: {} }, Array(101).fill({})]) {
      expect(parseInvalidations(body, knownType), JSON.stringify(body)?.slice(0, 40)).toEqual(expect.any(String));
    }
  });
});

describe('who may invalidate', () => {
  const KEY = 'k'.repeat(32);
  const request = (key?: string) => new Request('http://gateway/cache/invalidate', { method: 'POST', headers: key === undefined ? {} : { [INVALIDATION_KEY_HEADER]: key } });

  it('a caller with the shared key, or an administrator', () => {
    expect(refusal(request(KEY), KEY, undefined)).toBeUndefined();
    expect(refusal(request(), KEY, 'ADMIN')).toBeUndefined();
    expect(refusal(request(), undefined, 'ADMIN')).toBeUndefined();
  });

  it('refuses a wrong key 401, no credentials 401 and a user 403', () => {
    expect(refusal(request('k'.repeat(31)), KEY, 'ADMIN')?.status).toBe(401);
    expect(refusal(request(KEY), undefined, undefined)?.status).toBe(401);
    expect(refusal(request(), KEY, undefined)?.status).toBe(401);
    expect(refusal(request(), KEY, 'USER')?.status).toBe(403);
  });
});
