// The in-process backend: documents in memory, queries evaluated by mingo with the same documents MongoDB receives.
import { find, update as applyUpdate } from 'mingo';
import type { EmbeddedPersistence } from './persistence.js';
import { DuplicateKeyError, type Doc, type DocumentCollection, type DocumentDatabase, type Filter, type FindOptions, type IndexSpec, type Update } from './types.js';

/**
 * A deep copy, as structuredClone makes it but several times faster for what documents hold (plain objects, arrays,
 * Dates, plain values); anything else (a Map, a Buffer, an own `__proto__` key) goes to structuredClone itself.
 */
function clone<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map(clone) as T;
  if (value instanceof Date) return new Date(value.getTime()) as T;
  if (Object.getPrototypeOf(value) !== Object.prototype) return structuredClone(value);
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    if (key === '__proto__') return structuredClone(value);
    copy[key] = clone((value as Record<string, unknown>)[key]);
  }
  return copy as T;
}

/** MongoDB indexes a missing field as null, so two documents without it collide on a unique index. */
const indexKey = (spec: IndexSpec, doc: Doc): string =>
  JSON.stringify(Object.keys(spec.key).map((field) => doc[field] ?? null));

type Scalar = string | number | boolean;
const isScalar = (value: unknown): value is Scalar => typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';

/**
 * The values a top-level filter condition on one field accepts, when the condition is a plain equality or an `$in`
 * of plain values; undefined for any other condition (an operator, a date, a nested document), which an index here
 * does not narrow.
 */
function acceptedValues(condition: unknown): Scalar[] | undefined {
  if (isScalar(condition)) return [condition];
  if (typeof condition !== 'object' || condition === null || Array.isArray(condition)) return undefined;
  const operators = Object.keys(condition);
  const values = (condition as { $in?: unknown }).$in;
  return operators.length === 1 && Array.isArray(values) && values.every(isScalar) ? values : undefined;
}

/** A skip and a limit the fast path reads as mingo does: absent, or whole numbers not below zero. */
const isPlainWindow = ({ skip, limit }: FindOptions): boolean =>
  [skip, limit].every((n) => n === undefined || (Number.isInteger(n) && n >= 0));

type SortValue = string | number | Date;
/** How one top-level sort field's values compare, when all of them are of one kind mingo orders natively. */
function comparatorOf(values: unknown[]): ((a: SortValue, b: SortValue) => number) | undefined {
  const natural = (a: SortValue, b: SortValue) => (a < b ? -1 : a > b ? 1 : 0);
  if (values.every((value) => typeof value === 'string')) return natural;
  if (values.every((value) => typeof value === 'number' && !Number.isNaN(value))) return natural;
  if (values.every((value) => value instanceof Date && !Number.isNaN(value.getTime()))) {
    return (a, b) => natural((a as Date).getTime(), (b as Date).getTime());
  }
  return undefined;
}

/**
 * `docs` in `sort` order as mingo's $sort puts them (by each key in turn, ties kept in their given order), with a
 * stable sort; undefined when a key is a path or its values are missing or of mixed or other kinds (arrays, nulls,
 * NaN), which only mingo's ordering of types settles.
 */
function sortExactly<T extends Doc>(docs: T[], sort: FindOptions['sort']): T[] | undefined {
  if (Object.keys(sort).length === 0) return undefined;
  if (docs.length < 2) return docs;
  const keys: { field: string; direction: number; compare: (a: SortValue, b: SortValue) => number }[] = [];
  for (const [field, direction] of Object.entries(sort)) {
    const compare = field.includes('.') ? undefined : comparatorOf(docs.map((doc) => doc[field]));
    if (!compare) return undefined;
    keys.push({ field, direction, compare });
  }
  return [...docs].sort((a, b) => {
    for (const { field, direction, compare } of keys) {
      const order = compare(a[field] as SortValue, b[field] as SortValue);
      if (order !== 0) return order * direction;
    }
    return 0;
  });
}

/**
 * A secondary index on the first field of an index spec: documents by that field's value. A document whose value is
 * not a plain value (an array matches each of its elements in MongoDB, a document its equal) sits among the
 * `unindexed`, which every lookup through the index includes, so the candidates are always a superset of the matches.
 */
class FieldIndex {
  private readonly byValue = new Map<Scalar, Set<string>>();
  private readonly unindexed = new Set<string>();

  constructor(readonly field: string) {}

  add(doc: Doc): void {
    const value = doc[this.field];
    if (!isScalar(value)) {
      this.unindexed.add(doc._id);
      return;
    }
    let ids = this.byValue.get(value);
    if (!ids) this.byValue.set(value, (ids = new Set()));
    ids.add(doc._id);
  }

  remove(doc: Doc): void {
    const value = doc[this.field];
    if (!isScalar(value)) {
      this.unindexed.delete(doc._id);
      return;
    }
    const ids = this.byValue.get(value);
    ids?.delete(doc._id);
    if (ids?.size === 0) this.byValue.delete(value);
  }

  /** Whether every document sits under its value, so a lookup's candidates are exactly the documents it matches. */
  get exact(): boolean {
    // A dotted field is a path to MongoDB, never a key of the document's own.
    return this.unindexed.size === 0 && !this.field.includes('.');
  }

  ids(values: Scalar[]): Set<string> {
    const ids = new Set(this.unindexed);
    for (const value of values) for (const id of this.byValue.get(value) ?? []) ids.add(id);
    return ids;
  }
}

class EmbeddedCollection<T extends Doc> implements DocumentCollection<T> {
  private readonly docs = new Map<string, T>();
  /** Per unique index: the indexed values of each document -> its _id. */
  private readonly uniqueIndexes: { spec: IndexSpec; owners: Map<string, string> }[];
  /** Per index spec whose first field is not _id (the documents map is the _id index). */
  private readonly fieldIndexes: FieldIndex[];

  constructor(
    readonly name: string,
    indexes: IndexSpec[],
    private readonly persistence?: EmbeddedPersistence,
  ) {
    this.uniqueIndexes = indexes.filter((index) => index.unique).map((spec) => ({ spec, owners: new Map() }));
    const firstFields = new Set(indexes.map((index) => Object.keys(index.key)[0]!).filter((field) => field !== '_id'));
    this.fieldIndexes = [...firstFields].map((field) => new FieldIndex(field));
    for (const doc of persistence?.load(name) ?? []) this.store(undefined, doc as T, false);
  }

  /**
   * The documents a filter may match, as MongoDB's planner would pick them: by _id, else by an indexed field's
   * equality or `$in`, else all of them. `exact` when they are precisely the documents it matches (the filter is empty,
   * or its only condition is the one looked up and the index holds every document under its value), so mingo need not
   * evaluate it; otherwise mingo evaluates the whole filter on these, so the answer is the same.
   */
  private candidates(filter: Filter): { docs: T[]; exact: boolean } {
    const single = Object.keys(filter).length === 1;
    const ids = acceptedValues(filter['_id']);
    if (ids) {
      const docs = [...new Set(ids)].flatMap((id) => (typeof id === 'string' && this.docs.has(id) ? [this.docs.get(id)!] : []));
      return { docs, exact: single };
    }
    for (const index of this.fieldIndexes) {
      const values = acceptedValues(filter[index.field]);
      if (values) return { docs: [...index.ids(values)].map((id) => this.docs.get(id)!), exact: single && index.exact };
    }
    // An empty filter matches every document.
    return { docs: [...this.docs.values()], exact: Object.keys(filter).length === 0 };
  }

  /** The documents matching `filter` in `sort` order, skipped and limited: without mingo when that is sure to agree. */
  private select(filter: Filter, options: FindOptions): T[] {
    const { docs, exact } = this.candidates(filter);
    const window = (sorted: T[]) => sorted.slice(options.skip ?? 0, options.limit ? (options.skip ?? 0) + options.limit : undefined);
    if (exact && isPlainWindow(options)) {
      const sorted = sortExactly(docs, options.sort);
      if (sorted) return window(sorted);
    }
    let cursor = find(docs, filter).sort(options.sort);
    if (options.skip) cursor = cursor.skip(options.skip);
    if (options.limit) cursor = cursor.limit(options.limit);
    return cursor.all() as T[];
  }

  async find(filter: Filter, options: FindOptions): Promise<T[]> {
    return this.select(filter, options).map((doc) => clone(doc));
  }

  async findOne(filter: Filter): Promise<T | null> {
    const [doc] = await this.find(filter, { sort: { _id: 1 }, limit: 1 });
    return doc ?? null;
  }

  async count(filter: Filter): Promise<number> {
    if (Object.keys(filter).length === 0) return this.docs.size;
    const { docs, exact } = this.candidates(filter);
    return exact ? docs.length : find(docs, filter).all().length;
  }

  async insertOne(doc: T): Promise<void> {
    await this.insertMany([doc]);
  }

  async insertMany(docs: T[]): Promise<void> {
    // Like an ordered insertMany in MongoDB: documents before the first duplicate are kept.
    try {
      for (const doc of docs) {
        if (this.docs.has(doc._id)) throw new DuplicateKeyError(this.name, '_id_');
        this.store(undefined, clone(doc));
      }
    } finally {
      this.persistence?.sync();
    }
  }

  async findOneAndUpdate(filter: Filter, update: Update): Promise<T | null> {
    const [current] = this.select(filter, { sort: { _id: 1 }, limit: 1 });
    if (!current) return null;
    const next = clone(current);
    applyUpdate(next, update);
    this.store(current, next);
    this.persistence?.sync();
    return clone(next);
  }

  /**
   * Replaces `previous` (if any) with `next`, enforcing every unique index first so a violation changes nothing; then
   * journals it when persisting, before anything changes in memory (the caller syncs before acknowledging).
   */
  private store(previous: T | undefined, next: T, persist = true): void {
    const keys = this.uniqueIndexes.map(({ spec }) => indexKey(spec, next));
    this.uniqueIndexes.forEach(({ spec, owners }, i) => {
      const owner = owners.get(keys[i]!);
      if (owner !== undefined && owner !== next._id) throw new DuplicateKeyError(this.name, spec.name);
    });
    if (persist) this.persistence?.write(this.name, next);
    this.uniqueIndexes.forEach(({ spec, owners }, i) => {
      if (previous) owners.delete(indexKey(spec, previous));
      owners.set(keys[i]!, next._id);
    });
    for (const index of this.fieldIndexes) {
      if (previous) index.remove(previous);
      index.add(next);
    }
    this.docs.set(next._id, next);
  }
}

export class EmbeddedDatabase implements DocumentDatabase {
  readonly backend = 'embedded' as const;
  private readonly collections = new Map<string, EmbeddedCollection<Doc>>();

  /** In memory only, or kept by `persistence` (a DATA_DIR directory) across restarts. */
  constructor(private readonly persistence?: EmbeddedPersistence) {}

  async collection<T extends Doc>(name: string, indexes: IndexSpec[]): Promise<DocumentCollection<T>> {
    let collection = this.collections.get(name);
    if (!collection) {
      collection = new EmbeddedCollection<Doc>(name, indexes, this.persistence);
      this.collections.set(name, collection);
    }
    return collection as unknown as DocumentCollection<T>;
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {
    this.collections.clear();
    this.persistence?.close();
  }
}
