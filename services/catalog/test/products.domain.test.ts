// A product update under lost races: retried on a fresh read, re-validated, and given up with CONFLICT.
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { toGlobalId, type Identity } from '@ordergraph/core';
import { EmbeddedDatabase } from '@ordergraph/store';
import { createProductDomain, UPDATE_ATTEMPTS, type ProductDomain } from '../src/domain/products.js';
import { fieldsOf, ProductStore, type ProductDoc, type ProductFields } from '../src/store/products.js';

const ADMIN: Identity = { userId: toGlobalId('User', 'user-admin'), role: 'ADMIN' };

let store: ProductStore;
let product: ProductDoc;
let id: string;

beforeEach(async () => {
  store = await ProductStore.open(new EmbeddedDatabase());
  product = await store.create({ name: 'Kettle', priceCents: 5000, salePriceCents: null, description: null, imageUrl: null, attributes: null });
  id = toGlobalId('Product', product._id);
});

const updateAsAdmin = (productId: string, input: Parameters<ProductDomain['update']>[2]) => createProductDomain({ store }).update(ADMIN, productId, input);

/** Makes the next `times` compare-and-sets lose: another write lands between the update's read and its write. */
function loseRaces(times: number, competitor: (current: ProductFields) => Partial<ProductFields>) {
  const write = store.update.bind(store);
  let lost = 0;
  return vi.spyOn(store, 'update').mockImplementation(async (localId, version, fields, now) => {
    if (lost < times) {
      lost++;
      const current = (await store.findById(localId))!;
      await write(localId, current.version, { ...fieldsOf(current), ...competitor(fieldsOf(current)) });
    }
    return write(localId, version, fields, now);
  });
}

describe('products.update', () => {
  it('retries a lost race on a fresh read, so neither write is lost', async () => {
    const update = loseRaces(1, () => ({ description: 'from the competitor' }));
    const updated = await updateAsAdmin(id, { name: 'Steel Kettle' });
    expect(update).toHaveBeenCalledTimes(2);
    expect(updated).toMatchObject({ name: 'Steel Kettle', description: 'from the competitor', version: 2 });
  });

  it('re-validates against what the winner wrote', async () => {
    loseRaces(1, () => ({ priceCents: 3000 }));
    await expect(updateAsAdmin(id, { salePrice: 40 })).rejects.toMatchObject({
      extensions: { code: 'BAD_USER_INPUT', field: 'salePrice' },
    });
    expect(await store.findById(product._id)).toMatchObject({ priceCents: 3000, salePriceCents: null, version: 1 });
  });

  it(`gives up with CONFLICT after ${UPDATE_ATTEMPTS} lost races`, async () => {
    const update = loseRaces(Infinity, (current) => ({ description: `${current.description ?? ''}+` }));
    await expect(updateAsAdmin(id, { name: 'Never' })).rejects.toMatchObject({ extensions: { code: 'CONFLICT' } });
    expect(update).toHaveBeenCalledTimes(UPDATE_ATTEMPTS);
    expect(await store.findById(product._id)).toMatchObject({ name: 'Kettle', version: UPDATE_ATTEMPTS });
  });

  it.each([
    ['unknown', toGlobalId('Product', 'nope')],
    ['malformed', '%%%'],
    ['of another type', toGlobalId('User', 'user-0001')],
  ])('answers an %s ID with NOT_FOUND', async (_kind, unknownId) => {
    await expect(updateAsAdmin(unknownId, { name: 'X' })).rejects.toMatchObject({
      extensions: { code: 'NOT_FOUND', resource: 'Product', id: unknownId },
    });
  });
});
