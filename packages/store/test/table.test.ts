// The embedded store's compact parts: rows held column by column give back exactly the documents they were given,
// whatever their fields hold, and the blocked row lists keep their order through inserts and removals anywhere.
import { describe, expect, it } from 'vitest';
import { RowList } from '../src/rows.js';
import { Table } from '../src/table.js';
import type { Doc } from '../src/types.js';

describe('Table', () => {
  it('gives back every document as written, fields in their order, sharing nothing with the table', () => {
    const table = new Table();
    const docs: Doc[] = [
      { _id: 'order-0000', userId: 'VXNlcjox', status: 'PENDING', items: [{ productId: 'p-1', quantity: 2, unitPriceCents: 1999 }], totalCents: 3998, version: 0, createdAt: new Date(Date.UTC(2026, 0, 1)) },
      { _id: 'order-12345', status: 'SHIPPED', userId: 'VXNlcjoy', items: [], totalCents: 0.5, version: 1, createdAt: new Date(Date.UTC(2026, 0, 2)), extra: null },
      { _id: 'order-00123', userId: 7, items: [{ productId: 'p-2', quantity: 1, unitPriceCents: 5, note: { deep: [1, [2]] } }, { sku: 3 }], createdAt: undefined },
      { _id: 'b1c5d2e0-uuid', tags: ['a', 'b'], meta: { at: new Date(0) }, version: -0, createdAt: new Date(Number.NaN) },
      { _id: 'order-1', tags: [], mixed: [{ a: 1 }, 'text'], big: 2 ** 40, flag: true },
    ];
    const rows = docs.map((doc) => table.append(structuredClone(doc)));
    for (const [i, row] of rows.entries()) {
      const read = table.read(row);
      expect(read).toEqual(docs[i]);
      expect(Object.keys(read)).toEqual(Object.keys(docs[i]!));
    }
    expect(Object.is(table.read(rows[3]!)['version'], -0)).toBe(true);
    const first = table.read(rows[0]!);
    (first['items'] as { quantity: number }[])[0]!.quantity = 99;
    (first['createdAt'] as Date).setTime(0);
    expect(table.read(rows[0]!)).toEqual(docs[0]);
  });

  it('rewrites a row in place, dropping fields the new document lacks', () => {
    const table = new Table();
    const row = table.append({ _id: 'item-001', items: [{ q: 1 }], note: 'x', n: 1 });
    table.append({ _id: 'item-002', items: [{ q: 2 }], n: 2 });
    table.write(row, { _id: 'item-001', items: [{ q: 3 }, { q: 4 }], n: 1.5 });
    expect(table.read(row)).toEqual({ _id: 'item-001', items: [{ q: 3 }, { q: 4 }], n: 1.5 });
    expect(table.read(1)).toEqual({ _id: 'item-002', items: [{ q: 2 }], n: 2 });
    expect(table.cell(row, 'note')).toBeUndefined();
  });

  it('holds each repeated string once, and mostly distinct strings as they are', () => {
    const table = new Table();
    for (let i = 0; i < 70_000; i++) table.append({ _id: `u-${i}`, status: ['PENDING', 'SHIPPED'][i % 2]!, email: `someone${i}@example.com` });
    expect(table.column('status').kind).toBe('code');
    expect(table.column('email').kind).toBe('any');
    expect(table.read(69_999)).toEqual({ _id: 'u-69999', status: 'SHIPPED', email: 'someone69999@example.com' });
    expect(table.read(3)).toEqual({ _id: 'u-3', status: 'SHIPPED', email: 'someone3@example.com' });
  });

  it('orders numbered ids as their strings, without writing them out', () => {
    const table = new Table();
    const ids = ['order-0000', 'order-10000', 'order-1001', 'order-9999', 'order-0005', 'order-100000', 'order-99', 'order-abc', 'zzz'];
    for (const _id of ids) table.append({ _id });
    const column = table.column('_id');
    const sorted = [...ids].sort();
    const byColumn = ids.map((_, row) => row).sort((a, b) => column.compareRows(a, b)).map((row) => table.cell(row, '_id'));
    expect(byColumn).toEqual(sorted);
    for (const [row, id] of ids.entries()) {
      for (const other of ids) expect(Math.sign(column.compareTo(row, other))).toBe(id < other ? -1 : id > other ? 1 : 0);
    }
  });
});

describe('RowList', () => {
  it('keeps the order of a hundred thousand entries through inserts and removals anywhere', () => {
    const list = RowList.of(Int32Array.from({ length: 100_000 }, (_, i) => i * 2));
    const model: number[] = Array.from({ length: 100_000 }, (_, i) => i * 2);
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    for (let step = 0; step < 20_000; step++) {
      const at = random(model.length + 1);
      if (step % 3 === 2 && model.length > 0) {
        list.removeAt(at % model.length);
        model.splice(at % model.length, 1);
      } else {
        list.insert(at, step);
        model.splice(at, 0, step);
      }
    }
    expect(list.size).toBe(model.length);
    expect([...list]).toEqual(model);
    for (let i = 0; i < model.length; i += 997) expect(list.at(i)).toBe(model[i]);
    expect(Array.from(list.toArray())).toEqual(model);
  });

  it('grows from empty by pushes and inserts at either end', () => {
    const list = new RowList();
    for (let i = 0; i < 5000; i++) list.push(i);
    list.insert(0, -1);
    list.insert(list.size, 5000);
    expect(list.size).toBe(5002);
    expect(list.at(0)).toBe(-1);
    expect(list.at(5001)).toBe(5000);
    while (list.size > 0) list.removeAt(0);
    expect([...list]).toEqual([]);
    list.push(3);
    expect([...list]).toEqual([3]);
  });
});
