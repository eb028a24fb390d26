// The ProductStore contract: the same answers on every backend (embedded always, MongoDB when MONGO_URL is set).
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { DocumentDatabase } from '@ordergraph/store';
import { seedData } from '@ordergraph/seed';
import { recordingDatabase, storeBackends, unindexedQueries } from '@ordergraph/testkit';
import { seedProducts } from '../src/seed.js';
import { attributesOf, fieldsOf, ProductStore, type ProductDoc, type ProductFields } from '../src/store/products.js';

const at = (minute: number) => new Date(Date.UTC(2026, 5, 1, 12, minute));

const fields = (overrides: Partial<ProductFields> = {}): ProductFields => ({
  name: 'Desk Lamp',
  priceCents: 2500,
  salePriceCents: null,
  description: null,
  imageUrl: null,
  attributes: null,
  ...overrides,
});

describe.each(storeBackends())('ProductStore ($name)', (backend) => {
  let db: DocumentDatabase;
  let store: ProductStore;
  /** Creates products named as given, one minute apart, and returns them in creation order. */
  const createNamed = async (...names: string[]): Promise<ProductDoc[]> => {
    const docs: ProductDoc[] = [];
    for (const [i, name] of names.entries()) docs.push(await store.create(fields({ name }), at(i)));
    return docs;
  };

  beforeEach(async () => {
    db = await backend.open();
    store = await ProductStore.open(db);
  });

  afterEach(async () => {
    await db.close();
  });

  describe('create and findByIds', () => {
    it('stores every field and reads it back unchanged', async () => {
      const attributes = { $where: 'kept as data', 'dotted.key': [1, null, 'x'], nested: { deep: true } };
      const created = await store.create(
        fields({ salePriceCents: 1999, description: 'Bright', imageUrl: 'https://example.com/lamp.png', attributes }),
        at(0),
      );
      expect(created).toMatchObject({ name: 'Desk Lamp', words: ['desk', 'lamp'], version: 0, createdAt: at(0), updatedAt: at(0) });
      const found = await store.findById(created._id);
      expect(found).toEqual(created);
      expect(attributesOf(found!)).toEqual(attributes);
      expect(fieldsOf(found!)).toEqual(fields({ salePriceCents: 1999, description: 'Bright', imageUrl: 'https://example.com/lamp.png', attributes }));
    });

    it('keeps any JSON value as attributes, and null as none', async () => {
      for (const attributes of ['text', 42, [1, 'two'], false, null]) {
        const created = await store.create(fields({ attributes }));
        expect(attributesOf((await store.findById(created._id))!)).toEqual(attributes);
      }
    });

    it('answers in key order, repeats included, with null for a missing id', async () => {
      const [a, b] = await createNamed('A', 'B');
      const found = await store.findByIds([b!._id, 'missing', a!._id, b!._id]);
      expect(found.map((doc) => doc?.name ?? null)).toEqual(['B', null, 'A', 'B']);
      expect(await store.findByIds([])).toEqual([]);
      expect(await store.findById('missing')).toBeNull();
    });
  });

  describe('list', () => {
    it('pages oldest first, breaking createdAt ties by id', async () => {
      await createNamed('A', 'B', 'C', 'D');
      const sameTime = [await store.create(fields({ name: 'E' }), at(9)), await store.create(fields({ name: 'F' }), at(9))];
      const tied = sameTime.map((doc) => doc._id).sort();
      const all = await store.list({ limit: 10, offset: 0 });
      expect(all.map((doc) => doc.name).slice(0, 4)).toEqual(['A', 'B', 'C', 'D']);
      expect(all.slice(4).map((doc) => doc._id)).toEqual(tied);
      expect((await store.list({ limit: 2, offset: 1 })).map((doc) => doc.name)).toEqual(['B', 'C']);
      expect(await store.list({ limit: 2, offset: 6 })).toEqual([]);
    });

    it('returns nothing for limit 0 (which both backends would read as "no limit")', async () => {
      await createNamed('A');
      expect(await store.list({ limit: 0, offset: 0 })).toEqual([]);
    });
  });

  describe('update (compare-and-set)', () => {
    it('writes at the current version, bumps it and stamps updatedAt', async () => {
      const [doc] = await createNamed('Old Name');
      const updated = await store.update(doc!._id, 0, fields({ name: 'New Name', salePriceCents: 2000, attributes: { a: 1 } }), at(30));
      expect(updated).toMatchObject({ name: 'New Name', words: ['new', 'name'], salePriceCents: 2000, version: 1, createdAt: at(0), updatedAt: at(30) });
      expect(attributesOf(updated!)).toEqual({ a: 1 });
      expect(await store.findById(doc!._id)).toEqual(updated);
    });

    it('matches nothing at a stale version, and changes nothing', async () => {
      const [doc] = await createNamed('Original');
      await store.update(doc!._id, 0, fields({ name: 'First' }));
      expect(await store.update(doc!._id, 0, fields({ name: 'Stale' }))).toBeNull();
      expect(await store.findById(doc!._id)).toMatchObject({ name: 'First', version: 1 });
    });

    it('matches nothing for an unknown id', async () => {
      expect(await store.update('missing', 0, fields())).toBeNull();
    });
  });

  describe('search', () => {
    it('finds names holding every word of the text, case- and accent-insensitively, best first then by id', async () => {
      const [, lamp, desk, shade, big, cafe] = await createNamed('Chair', 'Lamp', 'Desk Lamp', 'Lamp-shade', 'Big desk lamp', 'Café Lamp', 'Lampshade', 'Clamp');
      const hits = await store.search('LAMP', 10);
      expect(hits.map(({ doc, score }) => [doc._id, score])).toEqual([
        [lamp!._id, 3],
        [shade!._id, 2],
        ...[desk!._id, big!._id, cafe!._id].sort().map((id) => [id, 1.5]),
      ]);
      expect((await store.search('lamp', 2)).map(({ doc }) => doc.name)).toEqual(['Lamp', 'Lamp-shade']);
      // Every word must be there, in any order; whole words only (no Lampshade, no Clamp).
      expect((await store.search('lamp desk', 10)).map(({ doc }) => doc.name).sort()).toEqual(['Big desk lamp', 'Desk Lamp']);
      expect((await store.search('cafe', 10)).map(({ doc }) => doc.name)).toEqual(['Café Lamp']);
      expect(await store.search('lam', 10)).toEqual([]);
    });

    it('orders equal scores by id', async () => {
      const docs = await createNamed('Red Mug', 'Blue Mug', 'Green Mug');
      const hits = await store.search('mug', 10);
      expect(hits.map(({ doc }) => doc._id)).toEqual(docs.map((doc) => doc._id).sort());
    });

    it('matches the text literally, not as a pattern nor as a field path', async () => {
      await createNamed('C++ Primer', 'Cup', '$name tag');
      expect((await store.search('c++', 10)).map(({ doc }) => doc.name)).toEqual(['C++ Primer']);
      expect(await store.search('.*', 10)).toEqual([]);
      expect((await store.search('$name', 10)).map(({ doc }) => doc.name)).toEqual(['$name tag']);
    });

    it('never compiles the text into a regular expression, however long or malformed', async () => {
      await createNamed('Lamp');
      const compiled = vi.spyOn(globalThis, 'RegExp');
      try {
        expect(await store.search(`(${'a'.repeat(100_000)}`, 10)).toEqual([]);
        expect(compiled.mock.calls.filter(([source]) => String(source).includes('aaaa'))).toEqual([]);
      } finally {
        compiled.mockRestore();
      }
    });

    it('finds nothing for a blank query or a zero limit', async () => {
      await createNamed('Lamp');
      expect(await store.search('   ', 10)).toEqual([]);
      expect(await store.search('lamp', 0)).toEqual([]);
    });
  });

  describe('seed', () => {
    it('loads the shared products once, as the seed defines them', async () => {
      expect(await seedProducts(store)).toBe(200);
      expect(await seedProducts(store)).toBe(0);
      const first = seedData().products[0]!;
      expect(await store.findById(first.localId)).toMatchObject({
        name: first.name,
        words: first.name.toLowerCase().split(' '),
        priceCents: first.priceCents,
        salePriceCents: null,
        description: first.description,
        createdAt: first.createdAt,
        updatedAt: first.createdAt,
        version: 0,
      });
      expect((await store.list({ limit: 100, offset: 100 })).map((doc) => doc._id)).toEqual(
        seedData().products.slice(100).map((product) => product.localId),
      );
    });

    it('leaves a collection that already has products alone', async () => {
      await createNamed('Existing');
      expect(await seedProducts(store)).toBe(0);
      expect(await store.list({ limit: 100, offset: 0 })).toHaveLength(1);
    });
  });

  describe('indexes', () => {
    it('answers every query it sends from an index (explained by the backend itself)', async () => {
      const recorded = recordingDatabase(db);
      const indexed = await ProductStore.open(recorded.db);
      await seedProducts(indexed);
      await indexed.findByIds(['product-0000', 'product-0001']);
      await indexed.findById('product-0002');
      await indexed.list({ limit: 20, offset: 150 });
      await indexed.search('lamp', 20);
      await indexed.search('Red Lamp', 20);
      const current = (await indexed.findById('product-0003'))!;
      await indexed.update(current._id, current.version, fieldsOf(current));
      expect(recorded.queries.length).toBeGreaterThan(5);
      expect(await unindexedQueries(recorded.queries)).toEqual([]);
    });
  });
});
