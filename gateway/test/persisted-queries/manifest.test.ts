// The manifest's per-client part: which client an id is served to, and which client a document belongs to.
import { describe, expect, it } from 'vitest';
import { documentOwner, parseManifest, servedBody, type PersistedManifest } from '../../src/persisted-queries/manifest.js';

const manifest = (operations: object[]) => JSON.stringify({ format: 'apollo-persisted-query-manifest', version: 1, operations });
const ME = 'query Me { me { id } }';
const PRODUCTS = 'query Products { products(limit: 1) { id } }';
const ORDERS = 'query Orders { orders { id } }';

describe('per-client safelists', () => {
  const operations = parseManifest(
    manifest([
      { id: 'me', body: ME, clientName: 'web' },
      { id: 'me', body: ME, clientName: 'ios' },
      { id: 'products', body: PRODUCTS },
      { id: 'orders', body: ORDERS, clientName: 'web' },
      { id: 'orders', body: ORDERS },
    ]),
  );

  it('serves an operation with a clientName to that client only, and one without to every client', () => {
    expect(servedBody(operations, 'me', 'web')).toBe(ME);
    expect(servedBody(operations, 'me', 'ios')).toBe(ME);
    expect(servedBody(operations, 'me', 'android')).toBeNull();
    expect(servedBody(operations, 'me', undefined)).toBeNull();
    expect(servedBody(operations, 'products', 'android')).toBe(PRODUCTS);
    expect(servedBody(operations, 'products', undefined)).toBe(PRODUCTS);
    // An entry without a clientName opens the id to all, whatever other entries of it say.
    expect(servedBody(operations, 'orders', 'android')).toBe(ORDERS);
    expect(servedBody(operations, 'missing', 'web')).toBeNull();
  });

  it('refuses a clientName no request could declare', () => {
    expect(() => parseManifest(manifest([{ id: 'me', body: ME, clientName: 'web"}' }]))).toThrow(/clientName/);
    expect(() => parseManifest(manifest([{ id: 'me', body: ME, clientName: 'x'.repeat(65) }]))).toThrow(/clientName/);
  });
});

describe('documentOwner', () => {
  const owner = (operations: object[], query: string) => {
    const parsed = parseManifest(manifest(operations));
    const watched: PersistedManifest = { current: () => parsed, close: () => undefined };
    return documentOwner(watched)({ query });
  };

  it("attributes a body to the one client every entry holding it names: a clientName, or the app of Hive's id", () => {
    expect(owner([{ id: 'a', body: ME, clientName: 'web' }], ME)).toEqual({ name: 'web', version: 'unknown', source: 'document' });
    expect(owner([{ id: 'web~1.4.2~abc', body: ME }], ME)).toEqual({ name: 'web', version: '1.4.2', source: 'document' });
    // Two versions of one app: the name, not a version.
    expect(owner([{ id: 'web~1.4.2~abc', body: ME }, { id: 'web~1.5.0~abc', body: ME }], ME)).toEqual({ name: 'web', version: 'unknown', source: 'document' });
  });

  it('attributes nothing to a body several clients, or every client, may send, nor to one the manifest lacks', () => {
    expect(owner([{ id: 'a', body: ME, clientName: 'web' }, { id: 'b', body: ME, clientName: 'ios' }], ME)).toBeUndefined();
    expect(owner([{ id: 'a', body: ME, clientName: 'web' }, { id: 'b', body: ME }], ME)).toBeUndefined();
    expect(owner([{ id: 'b', body: ME }, { id: 'a', body: ME, clientName: 'web' }], ME)).toBeUndefined();
    expect(owner([{ id: 'a', body: ME, clientName: 'web' }], PRODUCTS)).toBeUndefined();
  });
});
