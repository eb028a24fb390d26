// The embedded store's indexes. An ordered index keeps the documents themselves (one reference each, no copies) sorted
// by its key, so equality, range, sort, skip and limit are positions in an array; a multikey index keeps, per element
// of an array field, the documents holding it in _id order (an inverted index). Both hold the one live copy of each
// document the collection owns.
import { compareKey, isKeyValue, typeRank, type KeyPart, type Range, type Scalar } from './plan.js';
import type { Doc, IndexSpec } from './types.js';

/** Below this many pending documents an insert goes straight to its place; above, they are sorted and merged at once. */
const MERGE_THRESHOLD = 64;

export class OrderedIndex<T extends Doc> {
  /** The declared key fields; `_id` is appended (ascending) when absent so every document has one position. */
  readonly fields: string[];
  readonly directions: (1 | -1)[];
  readonly declared: number;
  private sorted: T[] = [];
  /** Inserted since the last read, in no order: bulk loads sort once instead of shifting the array per document. */
  private pending: T[] = [];
  /** Unique indexes: the keys of pending documents, checked before they are placed. */
  private pendingKeys = new Map<unknown, string>();
  /** Documents holding an array or a document in a key field, which this index cannot place. */
  private readonly irregular = new Map<string, T>();

  constructor(readonly spec: IndexSpec) {
    this.fields = Object.keys(spec.key);
    this.directions = Object.values(spec.key);
    this.declared = this.fields.length;
    if (!this.fields.includes('_id')) {
      this.fields.push('_id');
      this.directions.push(1);
    }
  }

  get name(): string {
    return this.spec.name;
  }

  /** Usable for lookups only while it holds every document. */
  get usable(): boolean {
    return this.irregular.size === 0;
  }

  get size(): number {
    return this.sorted.length + this.pending.length + this.irregular.size;
  }

  private regular(doc: T): boolean {
    return this.fields.every((field) => isKeyValue(doc[field]));
  }

  readonly compareDocs = (a: T, b: T): number => {
    for (let i = 0; i < this.fields.length; i++) {
      const field = this.fields[i]!;
      const order = compareKey(a[field], b[field]);
      if (order !== 0) return order * this.directions[i]!;
    }
    return 0;
  };

  /** A document against a key prefix, in index order: negative when the document comes first. */
  private compareToKey(doc: T, key: readonly KeyPart[]): number {
    for (let i = 0; i < key.length; i++) {
      const order = compareKey(doc[this.fields[i]!], key[i]);
      if (order !== 0) return order * this.directions[i]!;
    }
    return 0;
  }

  /** The first position whose document is not before `key` (or, with `after`, is after it). */
  private position(key: readonly KeyPart[], after: boolean): number {
    let low = 0;
    let high = this.sorted.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      const order = this.compareToKey(this.sorted[middle]!, key);
      if (order < 0 || (after && order === 0)) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  /** The unique key of a document: MongoDB indexes a missing field as null, so two documents without it collide. */
  private uniqueKey(doc: Doc): unknown {
    if (this.declared === 1) {
      const value = doc[this.fields[0]!];
      // A string or a number keys the map as itself (a Map tells 1 from '1'); anything else as its JSON.
      if (typeof value === 'string' || (typeof value === 'number' && !Number.isNaN(value))) return value;
    }
    return '\u0000' + JSON.stringify(this.fields.slice(0, this.declared).map((field) => {
      const value = doc[field] ?? null;
      return value instanceof Date ? { $date: value.getTime() } : typeof value === 'bigint' ? { $date: Number(value) } : value;
    }));
  }

  /** The _id of another document holding `doc`'s key in this unique index, if any. */
  conflict(doc: T): string | undefined {
    if (!this.spec.unique) return undefined;
    const pendingOwner = this.pendingKeys.get(this.uniqueKey(doc));
    if (pendingOwner !== undefined && pendingOwner !== doc._id) return pendingOwner;
    if (!this.regular(doc) || this.irregular.size > 0) return this.scanConflict(doc);
    const key = this.fields.slice(0, this.declared).map((field) => (doc[field] ?? null) as KeyPart);
    for (let i = this.position(key, false); i < this.sorted.length && this.compareToKey(this.sorted[i]!, key) === 0; i++) {
      if (this.sorted[i]!._id !== doc._id) return this.sorted[i]!._id;
    }
    return undefined;
  }

  /** Whether a document with `doc`'s whole key is already here (the primary index: the same _id). */
  holds(doc: T): boolean {
    if (this.pendingKeys.has(this.uniqueKey(doc))) return true;
    const key = this.fields.slice(0, this.declared).map((field) => (doc[field] ?? null) as KeyPart);
    const i = this.position(key, false);
    return i < this.sorted.length && this.compareToKey(this.sorted[i]!, key) === 0;
  }

  private scanConflict(doc: T): string | undefined {
    const key = this.uniqueKey(doc);
    for (const other of [...this.sorted, ...this.pending, ...this.irregular.values()]) {
      if (other._id !== doc._id && this.uniqueKey(other) === key) return other._id;
    }
    return undefined;
  }

  add(doc: T): void {
    if (!this.regular(doc)) {
      this.irregular.set(doc._id, doc);
      return;
    }
    const last = this.sorted[this.sorted.length - 1];
    if (this.pending.length === 0 && (last === undefined || this.compareDocs(last, doc) < 0)) {
      this.sorted.push(doc);
      return;
    }
    this.pending.push(doc);
    if (this.spec.unique) this.pendingKeys.set(this.uniqueKey(doc), doc._id);
    // A bulk load merges whenever the pending part reaches a quarter of the sorted part: a few merges in all, and the
    // pending keys of a unique index never outgrow a quarter of the index.
    if (this.pending.length >= Math.max(4096, this.sorted.length / 4)) this.settle();
  }

  /**
   * Puts `next` where `previous` was: in place when their keys are equal (an update that leaves the key alone, as most
   * do), so the array is not shifted twice.
   */
  replace(previous: T, next: T): void {
    if (!this.irregular.has(previous._id) && this.regular(next) && this.compareDocs(previous, next) === 0) {
      this.settle();
      const i = this.position(this.fields.map((field) => (previous[field] ?? null) as KeyPart), false);
      if (this.sorted[i] === previous) {
        this.sorted[i] = next;
        return;
      }
    }
    this.remove(previous);
    this.add(next);
  }

  remove(doc: T): void {
    if (this.irregular.delete(doc._id)) return;
    this.settle();
    let i = this.position(this.fields.map((field) => (doc[field] ?? null) as KeyPart), false);
    while (i < this.sorted.length && this.sorted[i] !== doc) i++;
    if (i < this.sorted.length) this.sorted.splice(i, 1);
  }

  /** Places pending documents: one by one when few, else sorted and merged in one pass. */
  settle(): void {
    if (this.pending.length === 0) return;
    const pending = this.pending;
    this.pending = [];
    this.pendingKeys.clear();
    if (pending.length < MERGE_THRESHOLD) {
      for (const doc of pending) this.sorted.splice(this.insertionPoint(doc), 0, doc);
      return;
    }
    pending.sort(this.compareDocs);
    if (this.sorted.length === 0) {
      this.sorted = pending;
      return;
    }
    // Built by pushing: `new Array(n)` past 100,000 elements makes a dictionary-mode array, three times larger and
    // slow to splice.
    const merged: T[] = [];
    let i = 0;
    let j = 0;
    while (i < this.sorted.length && j < pending.length) merged.push(this.compareDocs(this.sorted[i]!, pending[j]!) <= 0 ? this.sorted[i++]! : pending[j++]!);
    while (i < this.sorted.length) merged.push(this.sorted[i++]!);
    while (j < pending.length) merged.push(pending[j++]!);
    this.sorted = merged;
  }

  private insertionPoint(doc: T): number {
    let low = 0;
    let high = this.sorted.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.compareDocs(this.sorted[middle]!, doc) < 0) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  /**
   * The positions [start, end) of the documents whose first fields equal `equal` and whose next field lies in `range`
   * (when given).
   */
  span(equal: readonly KeyPart[], range?: Range): [number, number] {
    this.settle();
    if (!range) return [this.position(equal, false), this.position(equal, true)];
    const ascending = this.directions[equal.length] === 1;
    const [first, firstInclusive, last, lastInclusive] = ascending
      ? [range.low, range.lowInclusive, range.high, range.highInclusive]
      : [range.high, range.highInclusive, range.low, range.lowInclusive];
    return [this.position([...equal, first], !firstInclusive), this.position([...equal, last], lastInclusive)];
  }

  /** The document whose whole key is `key` (the primary index: its _id), if any. */
  get(key: readonly KeyPart[]): T | undefined {
    this.settle();
    const i = this.position(key, false);
    const doc = this.sorted[i];
    return doc !== undefined && this.compareToKey(doc, key) === 0 ? doc : undefined;
  }

  at(position: number): T {
    return this.sorted[position]!;
  }

  /** Every document in index order (for snapshots and scans of the whole index). */
  all(): readonly T[] {
    this.settle();
    return this.sorted;
  }
}

/** An index on an array field (MongoDB's multikey index): per element, the documents holding it, in _id order. */
export class MultikeyIndex<T extends Doc> {
  readonly field: string;
  private readonly postings = new Map<Scalar | null, T[]>();

  constructor(readonly spec: IndexSpec) {
    this.field = Object.keys(spec.key)[0]!;
  }

  get name(): string {
    return this.spec.name;
  }

  /** The elements a document is listed under: each plain element of its array, null for a missing field or null (as in MongoDB). */
  private elements(doc: T): (Scalar | null)[] {
    const value = doc[this.field];
    const values: unknown[] = Array.isArray(value) ? value : [value ?? null];
    return [...new Set(values.filter((element): element is Scalar | null => element === null || typeRank(element) === 2 || typeRank(element) === 3 || typeRank(element) === 8))];
  }

  add(doc: T): void {
    for (const element of this.elements(doc)) {
      let list = this.postings.get(element);
      if (!list) this.postings.set(element, (list = []));
      const last = list[list.length - 1];
      if (last === undefined || last._id < doc._id) list.push(doc);
      else list.splice(this.find(list, doc._id), 0, doc);
    }
  }

  /** Puts `next` where `previous` was, in place when both hold the same elements. */
  replace(previous: T, next: T): void {
    const before = this.elements(previous);
    const after = this.elements(next);
    if (before.length !== after.length || before.some((element, i) => element !== after[i])) {
      this.remove(previous);
      this.add(next);
      return;
    }
    for (const element of before) {
      const list = this.postings.get(element)!;
      const i = this.find(list, previous._id);
      if (list[i] === previous) list[i] = next;
    }
  }

  remove(doc: T): void {
    for (const element of this.elements(doc)) {
      const list = this.postings.get(element);
      if (!list) continue;
      const i = this.find(list, doc._id);
      if (list[i] === doc) list.splice(i, 1);
      if (list.length === 0) this.postings.delete(element);
    }
  }

  private find(list: T[], id: string): number {
    let low = 0;
    let high = list.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (list[middle]!._id < id) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  /** Whether `doc` is in `list` (one of this index's lists), by binary search on _id. */
  listed(list: readonly T[], doc: T): boolean {
    return list[this.find(list as T[], doc._id)] === doc;
  }

  /** The documents holding `element`, in _id order (not to be changed by the caller). */
  holding(element: Scalar | null): readonly T[] {
    return this.postings.get(element) ?? [];
  }
}
