// The document-store contract: both backends answer the same queries with the same results, errors and ordering.
// Runs against the embedded store always and against MongoDB whenever MONGO_URL points at a server.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { storeBackends } from '@ordergraph/testkit';
import { DuplicateKeyError, type DocumentCollection, type DocumentDatabase } from '../src/index.js';

interface Item {
  [key: string]: unknown;
  _id: string;
  sku: string;
  rank: number;
  tags: string[];
  createdAt: Date;
  version: number;
}

const item = (n: number, overrides: Partial<Item> = {}): Item => ({
  _id: `item-${String(n).padStart(3, '0')}`,
  sku: `SKU-${n}`,
  rank: n % 3,
  tags: n % 2 === 0 ? ['even'] : ['odd'],
  createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, n)),
  version: 0,
  ...overrides,
});

describe.each(storeBackends())('document store contract ($name)', (backend) => {
  let db: DocumentDatabase;
  let items: DocumentCollection<Item>;

  beforeEach(async () => {
    db = await backend.open();
    items = await db.collection<Item>('items', [
      { name: 'sku_unique', key: { sku: 1 }, unique: true },
      { name: 'rank_createdAt', key: { rank: 1, createdAt: -1 } },
    ]);
    await items.insertMany([5, 3, 1, 4, 2, 6].map((n) => item(n)));
  });

  afterEach(async () => {
    await db.close();
  });

  it('finds with filter, sort, skip and limit', async () => {
    const found = await items.find({ rank: { $in: [1, 2] } }, { sort: { createdAt: -1 }, skip: 1, limit: 2 });
    expect(found.map((doc) => doc._id)).toEqual(['item-004', 'item-002']);
  });

  it('sorts on compound keys and breaks ties on the second key', async () => {
    const found = await items.find({}, { sort: { rank: 1, _id: -1 } });
    expect(found.map((doc) => [doc.rank, doc._id])).toEqual([
      [0, 'item-006'],
      [0, 'item-003'],
      [1, 'item-004'],
      [1, 'item-001'],
      [2, 'item-005'],
      [2, 'item-002'],
    ]);
  });

  it('supports keyset filters with $or, dates and $regex', async () => {
    const position = item(3);
    const after = await items.find(
      { $or: [{ createdAt: { $gt: position.createdAt } }, { createdAt: position.createdAt, _id: { $gt: position._id } }] },
      { sort: { createdAt: 1, _id: 1 } },
    );
    expect(after.map((doc) => doc._id)).toEqual(['item-004', 'item-005', 'item-006']);
    const matched = await items.find({ sku: { $regex: 'sku-[12]$', $options: 'i' } }, { sort: { _id: 1 } });
    expect(matched.map((doc) => doc._id)).toEqual(['item-001', 'item-002']);
  });

  it('returns dates as Date and copies, never live references', async () => {
    const [first] = await items.find({ _id: 'item-001' }, { sort: { _id: 1 } });
    expect(first?.createdAt).toBeInstanceOf(Date);
    first!.tags.push('mutated');
    expect((await items.findOne({ _id: 'item-001' }))?.tags).toEqual(['odd']);
  });

  it('copies nested documents, arrays and dates deeply, whichever way they are read or written', async () => {
    const nested = { _id: 'nested', sku: 'N', lines: [{ qty: 1, at: new Date(Date.UTC(2026, 0, 1)), note: null }], meta: { a: { b: [1, [2]] } } };
    await items.insertOne(nested as unknown as Item);
    nested.lines[0]!.qty = 99;
    const [read] = await items.find({ _id: 'nested' }, { sort: { _id: 1 } });
    (read!.lines as { at: Date }[])[0]!.at.setTime(0);
    ((read!.meta as { a: { b: unknown[] } }).a.b[1] as number[]).push(3);
    const updated = await items.findOneAndUpdate({ _id: 'nested' }, { $inc: { version: 1 } });
    (updated!.meta as { a: { b: unknown[] } }).a.b.push('x');
    expect(await items.findOne({ _id: 'nested' })).toEqual({ ...nested, lines: [{ qty: 1, at: new Date(Date.UTC(2026, 0, 1)), note: null }], version: 1 });
  });

  it('counts and finds one, or null', async () => {
    expect(await items.count({ tags: 'even' })).toBe(3);
    expect(await items.findOne({ sku: 'SKU-4' })).toMatchObject({ _id: 'item-004' });
    expect(await items.findOne({ sku: 'nope' })).toBeNull();
  });

  it('rejects a duplicate _id or unique key with DuplicateKeyError naming the index, and stores nothing', async () => {
    await expect(items.insertOne(item(1, { sku: 'SKU-new' }))).rejects.toBeInstanceOf(DuplicateKeyError);
    const error = await items.insertOne(item(7, { sku: 'SKU-1' })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DuplicateKeyError);
    expect((error as DuplicateKeyError).index).toBe('sku_unique');
    expect(await items.count({})).toBe(6);
  });

  it('updates atomically and returns the document as updated', async () => {
    const updated = await items.findOneAndUpdate({ _id: 'item-001', version: 0 }, { $set: { rank: 9 }, $inc: { version: 1 } });
    expect(updated).toMatchObject({ _id: 'item-001', rank: 9, version: 1 });
    expect(await items.findOne({ _id: 'item-001' })).toMatchObject({ rank: 9, version: 1 });
  });

  it('is a compare-and-set: a stale version matches nothing and changes nothing', async () => {
    await items.findOneAndUpdate({ _id: 'item-002', version: 0 }, { $inc: { version: 1 } });
    expect(await items.findOneAndUpdate({ _id: 'item-002', version: 0 }, { $set: { rank: 7 } })).toBeNull();
    expect(await items.findOne({ _id: 'item-002' })).toMatchObject({ rank: 2, version: 1 });
  });

  it('of concurrent compare-and-sets on one version exactly one wins', async () => {
    const attempts = await Promise.all(
      Array.from({ length: 10 }, (_, i) => items.findOneAndUpdate({ _id: 'item-003', version: 0 }, { $set: { rank: i }, $inc: { version: 1 } })),
    );
    expect(attempts.filter((result) => result !== null)).toHaveLength(1);
    expect((await items.findOne({ _id: 'item-003' }))?.version).toBe(1);
  });

  it('refuses an update that would violate a unique index and leaves the document unchanged', async () => {
    await expect(items.findOneAndUpdate({ _id: 'item-001' }, { $set: { sku: 'SKU-2' } })).rejects.toBeInstanceOf(DuplicateKeyError);
    expect((await items.findOne({ _id: 'item-001' }))?.sku).toBe('SKU-1');
    // The unique key it used to hold is still its own, and its new key is free after a legal change.
    await items.findOneAndUpdate({ _id: 'item-001' }, { $set: { sku: 'SKU-100' } });
    await items.insertOne(item(8, { sku: 'SKU-1' }));
    expect(await items.count({ sku: { $in: ['SKU-1', 'SKU-100'] } })).toBe(2);
  });

  it('answers lookups by _id and by an indexed field exactly as a scan would, through every change', async () => {
    const ids = (docs: Item[]) => docs.map((doc) => doc._id);
    const byId = await items.find({ _id: { $in: ['item-002', 'nope', 'item-001'] } }, { sort: { _id: 1 } });
    expect(ids(byId)).toEqual(['item-001', 'item-002']);
    expect(await items.find({ _id: 'item-001', rank: 2 }, { sort: { _id: 1 } })).toEqual([]);
    // A document moves between index entries when its indexed field changes.
    await items.findOneAndUpdate({ _id: 'item-001' }, { $set: { rank: 2 } });
    expect(ids(await items.find({ rank: 2 }, { sort: { _id: 1 } }))).toEqual(['item-001', 'item-002', 'item-005']);
    expect(ids(await items.find({ rank: 1 }, { sort: { _id: 1 } }))).toEqual(['item-004']);
    // An array matches each of its elements; a missing field matches null; other conditions still apply.
    await items.insertMany([item(7, { rank: [1, 5] as unknown as number }), item(8, { rank: undefined as unknown as number })]);
    expect(ids(await items.find({ rank: 1 }, { sort: { _id: 1 } }))).toEqual(['item-004', 'item-007']);
    expect(ids(await items.find({ rank: { $in: [5, 0] }, tags: 'odd' }, { sort: { _id: 1 } }))).toEqual(['item-003', 'item-007']);
    expect(ids(await items.find({ rank: null }, { sort: { _id: 1 } }))).toEqual(['item-008']);
    expect(await items.count({ rank: { $in: [0, 1, 2] } })).toBe(7);
  });

  it('answers a lookup the index settles alone as the same query evaluated in full does, in every sort', async () => {
    // The embedded store answers a lone `_id` or indexed-field condition without evaluating it; adding an always-true
    // condition makes it evaluate the whole filter, so the two must agree on membership, order, skip and limit.
    const evaluated = (filter: Record<string, unknown>) => ({ ...filter, $and: [{ _id: { $exists: true } }] });
    const same = async (filter: Record<string, unknown>, options: Parameters<typeof items.find>[1]) => {
      const fast = await items.find(filter, options);
      expect(fast).toEqual(await items.find(evaluated(filter), options));
      expect(await items.count(filter)).toBe(await items.count(evaluated(filter)));
      return fast.map((doc) => doc._id);
    };
    // Ties on the first key, broken by the second in either direction; dates descending; skip and limit.
    await items.insertMany([item(7, { rank: 1, createdAt: item(4).createdAt }), item(8, { sku: 'SKU-8', rank: 1 })]);
    expect(await same({ rank: { $in: [1, 2] } }, { sort: { rank: 1, _id: -1 } })).toEqual(['item-008', 'item-007', 'item-004', 'item-001', 'item-005', 'item-002']);
    expect(await same({ rank: 1 }, { sort: { createdAt: -1, _id: 1 } })).toEqual(['item-008', 'item-004', 'item-007', 'item-001']);
    expect(await same({ rank: 1 }, { sort: { createdAt: -1, _id: 1 }, skip: 1, limit: 2 })).toEqual(['item-004', 'item-007']);
    expect(await same({}, { sort: { createdAt: 1, _id: -1 }, skip: 2, limit: 3 })).toEqual(['item-003', 'item-007', 'item-004']);
    expect(await same({ _id: { $in: ['item-003', 'item-001', 'item-003'] } }, { sort: { _id: -1 } })).toEqual(['item-003', 'item-001']);
    // A number never equals its string.
    expect(await same({ rank: '1' }, { sort: { _id: 1 } })).toEqual([]);
    expect(await same({ _id: { $in: [1, 'item-001'] } }, { sort: { _id: 1 } })).toEqual(['item-001']);
    // Sort fields missing, of mixed kinds or arrays in some documents order by type as MongoDB does.
    await items.insertMany([
      item(9, { rank: 1, version: 'draft' as unknown as number, tags: [] }),
      item(10, { rank: 1, createdAt: undefined as unknown as Date, version: undefined as unknown as number, tags: ['a', 'z'] }),
    ]);
    expect(await same({ rank: 1 }, { sort: { createdAt: 1, _id: 1 } })).toEqual(['item-010', 'item-001', 'item-004', 'item-007', 'item-008', 'item-009']);
    expect(await same({ rank: 1 }, { sort: { version: 1, _id: 1 } })).toEqual(['item-010', 'item-001', 'item-004', 'item-007', 'item-008', 'item-009']);
    await same({ rank: 1 }, { sort: { tags: 1, _id: 1 } });
    // Once the index holds a document it cannot place (an array), the lookup is evaluated, arrays matching by element.
    await items.insertOne(item(11, { rank: [1, 2] as unknown as number }));
    expect(await same({ rank: 1 }, { sort: { _id: 1 } })).toEqual(['item-001', 'item-004', 'item-007', 'item-008', 'item-009', 'item-010', 'item-011']);
  });

  it('unsets fields', async () => {
    await items.findOneAndUpdate({ _id: 'item-005' }, { $unset: { tags: '' } });
    expect(await items.findOne({ _id: 'item-005' })).not.toHaveProperty('tags');
  });

  it('explains which index answers a query, as the backend plans it', async () => {
    const ranked = await db.collection<Item>('ranked', [
      { name: 'rank_createdAt_id', key: { rank: 1, createdAt: -1, _id: -1 } },
      { name: 'tags_id', key: { tags: 1, _id: 1 }, multikey: true },
    ]);
    await ranked.insertMany(Array.from({ length: 40 }, (_, n) => item(n, { tags: n % 2 === 0 ? ['even', `n${n}`] : ['odd', `n${n}`] })));
    const plan = (filter: Record<string, unknown>, options: Parameters<typeof ranked.find>[1]) => ranked.explain(filter, options);
    expect(await plan({ _id: { $in: ['item-001', 'item-002'] } }, { sort: { _id: 1 } })).toMatchObject({ index: '_id_' });
    expect(await plan({ rank: 1 }, { sort: { createdAt: -1, _id: -1 }, skip: 5, limit: 3 })).toMatchObject({ index: 'rank_createdAt_id', sortedInMemory: false });
    expect(await plan({ rank: 2, createdAt: { $gte: item(10).createdAt } }, { sort: { createdAt: 1, _id: 1 } })).toMatchObject({ index: 'rank_createdAt_id', sortedInMemory: false });
    expect(await plan({ tags: { $all: ['even', 'n4'] } }, { sort: { _id: 1 }, limit: 10 })).toMatchObject({ index: 'tags_id' });
    // Without a usable index the whole collection is read.
    expect(await plan({ sku: 'SKU-4' }, { sort: { _id: 1 } })).toMatchObject({ index: null });
    expect((await ranked.find({ tags: { $all: ['even', 'n4'] } }, { sort: { _id: 1 } })).map((doc) => doc._id)).toEqual(['item-004']);
    expect((await ranked.find({ rank: 1 }, { sort: { createdAt: -1, _id: -1 }, skip: 5, limit: 3 })).map((doc) => doc._id)).toEqual(['item-022', 'item-019', 'item-016']);
  });

  it('finds the documents holding every one of several elements, in _id order either way', async () => {
    const tagged = await db.collection<Item>('tagged', [{ name: 'tags_id', key: { tags: 1, _id: 1 }, multikey: true }]);
    const tags = (n: number) => [n % 2 ? 'odd' : 'even', n % 3 ? 'x' : 'three', n % 5 ? 'y' : 'five'];
    await tagged.insertMany(Array.from({ length: 300 }, (_, n) => item(299 - n, { tags: tags(299 - n) })));
    const expected = Array.from({ length: 300 }, (_, n) => n).filter((n) => n % 30 === 0).map((n) => item(n)._id);
    const ids = async (direction: 1 | -1, limit?: number) =>
      (await tagged.find({ tags: { $all: ['five', 'even', 'three'] } }, { sort: { _id: direction }, ...(limit ? { limit } : {}) })).map((doc) => doc._id);
    expect(await ids(1)).toEqual(expected);
    expect(await ids(-1)).toEqual([...expected].reverse());
    expect(await ids(1, 3)).toEqual(expected.slice(0, 3));
  });

  it('reads only the page of an ordered index at any offset (embedded: from positions)', async () => {
    const ranked = await db.collection<Item>('deep', [{ name: 'createdAt_id', key: { createdAt: 1, _id: 1 } }]);
    await ranked.insertMany(Array.from({ length: 300 }, (_, n) => item(n)));
    const deep = await ranked.find({}, { sort: { createdAt: 1, _id: 1 }, skip: 250, limit: 5 });
    expect(deep.map((doc) => doc._id)).toEqual(['item-250', 'item-251', 'item-252', 'item-253', 'item-254']);
    const plan = await ranked.explain({}, { sort: { createdAt: 1, _id: 1 }, skip: 250, limit: 5 });
    expect(plan).toMatchObject({ index: 'createdAt_id', sortedInMemory: false });
    if (backend.name !== 'mongodb') expect(plan.docsExamined).toBe(5);
  });
});
