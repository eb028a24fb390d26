// The embedded store's indexes, over the rows of its table (./table.ts). An ordered index keeps row numbers sorted by
// its key in blocks (./rows.ts), so equality, range, sort, skip and limit are positions, and an insert moves one
// block; a multikey index keeps, per element of an array field, the rows holding it in _id order (an inverted index).
import { isKeyValue, typeRank, type KeyPart, type Range, type Scalar } from './plan.js';
import { RowList } from './rows.js';
import type { Column, Table } from './table.js';
import type { Doc, IndexSpec } from './types.js';

/** A key field's value in a document not yet stored, as an index compares it (missing is null). */
const docKey = (doc: Doc, field: string): unknown => (doc as Record<string, unknown>)[field] ?? null;

export class OrderedIndex {
  /** The declared key fields; `_id` is appended (ascending) when absent so every row has one position. */
  readonly fields: string[];
  readonly directions: (1 | -1)[];
  readonly declared: number;
  private readonly columns: Column[];
  private readonly id: Column;
  private readonly list = new RowList();
  /** Rows holding an array or a document in a key field, which this index cannot place. */
  private readonly irregular = new Set<number>();

  constructor(
    readonly spec: IndexSpec,
    table: Table,
  ) {
    this.fields = Object.keys(spec.key);
    this.directions = Object.values(spec.key);
    this.declared = this.fields.length;
    if (!this.fields.includes('_id')) {
      this.fields.push('_id');
      this.directions.push(1);
    }
    this.columns = this.fields.map((field) => table.column(field));
    this.id = table.column('_id');
  }

  get name(): string {
    return this.spec.name;
  }

  /** Usable for lookups only while it holds every row. */
  get usable(): boolean {
    return this.irregular.size === 0;
  }

  get size(): number {
    return this.list.size + this.irregular.size;
  }

  private regular(row: number): boolean {
    return this.columns.every((column) => column.regular(row));
  }

  private regularDoc(doc: Doc): boolean {
    return this.fields.every((field) => isKeyValue((doc as Record<string, unknown>)[field]));
  }

  readonly compareRows = (a: number, b: number): number => {
    for (let i = 0; i < this.columns.length; i++) {
      const order = this.columns[i]!.compareRows(a, b);
      if (order !== 0) return order * this.directions[i]!;
    }
    return 0;
  };

  /** A row against a key prefix, in index order: negative when the row comes first. */
  private compareToKey(row: number, key: readonly unknown[]): number {
    for (let i = 0; i < key.length; i++) {
      const order = this.columns[i]!.compareTo(row, key[i]);
      if (order !== 0) return order * this.directions[i]!;
    }
    return 0;
  }

  /** Where the first row not before `key` (or, with `after`, after it) is: a block and offset of the list. */
  private find(key: readonly unknown[], after: boolean): [number, number] {
    return this.list.find((row) => {
      const order = this.compareToKey(row, key);
      return order < 0 || (after && order === 0);
    });
  }

  /** The first position whose row is not before `key` (or, with `after`, is after it). */
  private position(key: readonly unknown[], after: boolean): number {
    return this.list.positionOf(...this.find(key, after));
  }

  /** The unique key of a stored row or of a document: a missing field is null, so two rows without it collide. */
  private uniqueKey(values: unknown[]): unknown {
    if (this.declared === 1) {
      const value = values[0];
      // A string or a number keys the map as itself (a Map tells 1 from '1'); anything else as its JSON.
      if (typeof value === 'string' || (typeof value === 'number' && !Number.isNaN(value))) return value;
    }
    return '\u0000' + JSON.stringify(values.map((value) => (value instanceof Date ? { $date: value.getTime() } : typeof value === 'bigint' ? { $date: Number(value) } : (value ?? null))));
  }

  private rowUniqueKey(row: number): unknown {
    return this.uniqueKey(this.columns.slice(0, this.declared).map((column) => column.key(row)));
  }

  private docUniqueKey(doc: Doc): unknown {
    return this.uniqueKey(this.fields.slice(0, this.declared).map((field) => docKey(doc, field)));
  }

  /** The _id of a row other than `doc`'s holding `doc`'s key in this unique index, if any. */
  conflict(doc: Doc): string | undefined {
    if (!this.spec.unique) return undefined;
    if (!this.regularDoc(doc) || this.irregular.size > 0) return this.scanConflict(doc);
    const key = this.fields.slice(0, this.declared).map((field) => docKey(doc, field));
    for (let i = this.position(key, false); i < this.list.size && this.compareToKey(this.list.at(i), key) === 0; i++) {
      const id = this.id.key(this.list.at(i));
      if (id !== doc._id) return id as string;
    }
    return undefined;
  }

  /**
   * Where a row holding `doc`'s whole key would go, or undefined when one is here already (the primary index: the
   * same _id): the insert that follows places the row there without a second search.
   */
  slot(doc: Doc): [number, number] | undefined {
    const key = this.fields.map((field) => docKey(doc, field));
    const found = this.find(key, false);
    const row = this.list.entry(...found);
    return row !== undefined && this.compareToKey(row, key) === 0 ? undefined : found;
  }

  /** Places a row at the slot `slot` gave for its document, the index unchanged since. */
  addAt(slot: [number, number], row: number): void {
    if (!this.regular(row)) this.irregular.add(row);
    else this.list.insertAt(slot[0], slot[1], row);
  }

  private scanConflict(doc: Doc): string | undefined {
    const key = this.docUniqueKey(doc);
    for (const row of [...this.list, ...this.irregular]) {
      const id = this.id.key(row);
      if (id !== doc._id && this.rowUniqueKey(row) === key) return id as string;
    }
    return undefined;
  }

  /** Whether storing `doc` in `row` would leave the row where it is (its key and its regularity unchanged). */
  keeps(row: number, doc: Doc): boolean {
    if (this.irregular.has(row) || !this.regularDoc(doc)) return false;
    return this.compareToKey(row, this.fields.map((field) => docKey(doc, field))) === 0;
  }

  /** Places a row by its key: a search over the blocks and a shift within one. */
  add(row: number): void {
    if (!this.regular(row)) {
      this.irregular.add(row);
      return;
    }
    const [b, offset] = this.list.find((other) => this.compareRows(other, row) < 0);
    this.list.insertAt(b, offset, row);
  }

  /** Takes a row out, found by the key it holds now (before the table changes it). */
  remove(row: number): void {
    if (this.irregular.delete(row)) return;
    let i = this.position(this.columns.map((column) => column.key(row)), false);
    while (i < this.list.size && this.list.at(i) !== row) i++;
    if (i < this.list.size) this.list.removeAt(i);
  }

  /**
   * The positions [start, end) of the rows whose first fields equal `equal` and whose next field lies in `range`
   * (when given).
   */
  span(equal: readonly KeyPart[], range?: Range): [number, number] {
    if (!range) return [this.position(equal, false), this.position(equal, true)];
    const ascending = this.directions[equal.length] === 1;
    const [first, firstInclusive, last, lastInclusive] = ascending
      ? [range.low, range.lowInclusive, range.high, range.highInclusive]
      : [range.high, range.highInclusive, range.low, range.lowInclusive];
    return [this.position([...equal, first], !firstInclusive), this.position([...equal, last], lastInclusive)];
  }

  /** The row whose whole key is `key` (the primary index: its _id), if any. */
  get(key: readonly KeyPart[]): number | undefined {
    const row = this.list.entry(...this.find(key, false));
    return row !== undefined && this.compareToKey(row, key) === 0 ? row : undefined;
  }

  at(position: number): number {
    return this.list.at(position);
  }

  /** Every row in index order (for snapshots and scans of the whole index). */
  all(): Iterable<number> {
    return this.list;
  }
}

/** An index on an array field (MongoDB's multikey index): per element, the rows holding it, in _id order. */
export class MultikeyIndex {
  readonly field: string;
  private readonly column: Column;
  private readonly id: Column;
  private readonly postings = new Map<Scalar | null, number[]>();

  constructor(
    readonly spec: IndexSpec,
    table: Table,
  ) {
    this.field = Object.keys(spec.key)[0]!;
    this.column = table.column(this.field);
    this.id = table.column('_id');
  }

  get name(): string {
    return this.spec.name;
  }

  /** The elements a value is listed under: each plain element of an array, null for a missing field or null (as in MongoDB). */
  elementsOf(value: unknown): (Scalar | null)[] {
    const values: unknown[] = Array.isArray(value) ? value : [value ?? null];
    return [...new Set(values.filter((element): element is Scalar | null => element === null || typeRank(element) === 2 || typeRank(element) === 3 || typeRank(element) === 8))];
  }

  /** Whether storing `doc` in `row` would leave the row under the same elements. */
  keeps(row: number, doc: Doc): boolean {
    const before = this.elementsOf(this.column.key(row));
    const after = this.elementsOf((doc as Record<string, unknown>)[this.field]);
    return before.length === after.length && before.every((element, i) => element === after[i]);
  }

  add(row: number): void {
    for (const element of this.elementsOf(this.column.key(row))) {
      const list = this.postings.get(element);
      // A literal of one: `[]` then a push would reserve 17 places, and most words (a user's own) have one user.
      if (!list) this.postings.set(element, [row]);
      else if (this.id.compareRows(list[list.length - 1]!, row) < 0) list.push(row);
      else list.splice(this.find(list, row), 0, row);
    }
  }

  /** Takes a row out, under the elements it holds now (before the table changes it). */
  remove(row: number): void {
    for (const element of this.elementsOf(this.column.key(row))) {
      const list = this.postings.get(element);
      if (!list) continue;
      const i = this.find(list, row);
      if (list[i] === row) list.splice(i, 1);
      if (list.length === 0) this.postings.delete(element);
    }
  }

  /** The first position of `list` in [low, high) whose row is not before `row` in _id order: a binary search. */
  private find(list: readonly number[], row: number, low = 0, high = list.length): number {
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.id.compareRows(list[middle]!, row) < 0) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  /** Whether `row` is in `list` (one of this index's lists), by binary search on _id. */
  listed(list: readonly number[], row: number): boolean {
    return list[this.find(list, row)] === row;
  }

  /**
   * The first position of `list` at or after `from` whose row is not before `row` in _id order: a galloping search,
   * so walking a list forwards against rows in _id order costs the smaller list's length times a logarithm at most.
   */
  seek(list: readonly number[], row: number, from: number): number {
    let low = from;
    let high = from;
    let step = 1;
    while (high < list.length && this.id.compareRows(list[high]!, row) < 0) {
      low = high + 1;
      high += step;
      step *= 2;
    }
    return this.find(list, row, low, Math.min(high, list.length));
  }

  /** The rows holding `element`, in _id order (not to be changed by the caller). */
  holding(element: Scalar | null): readonly number[] {
    return this.postings.get(element) ?? [];
  }
}

