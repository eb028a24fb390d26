// The in-process backend: one live copy of each document, held by the collection and its indexes, queries planned on
// the indexes the stores declare (as MongoDB plans them) and evaluated by mingo with the same documents MongoDB receives.
import { channel } from 'node:diagnostics_channel';
import { find, Query, update as applyUpdate } from 'mingo';
import { MultikeyIndex, OrderedIndex } from './indexes.js';
import { analyze, type Conditions, type KeyPart, type KeyValue, type Range, type Scalar } from './plan.js';
import type { EmbeddedPersistence } from './persistence.js';
import { DuplicateKeyError, type Doc, type DocumentCollection, type DocumentDatabase, type Filter, type FindOptions, type IndexSpec, type QueryPlan, type Update } from './types.js';

/** Every query the embedded store answers, with its plan: tests subscribe to assert that none scans a collection. */
export const storeQueries = channel('ordergraph:store:query');
export interface StoreQueryEvent {
  collection: string;
  operation: 'find' | 'count' | 'findOneAndUpdate';
  filter: Filter;
  plan: QueryPlan;
}

/**
 * A deep copy, as structuredClone makes it but several times faster for what documents hold (plain objects, arrays,
 * Dates, plain values); anything else (a Map, a Buffer, an own `__proto__` key) goes to structuredClone itself. A plain
 * object is copied by spreading, which gives the copy its source's shape, every field inside the object itself: a
 * third smaller than an object built field by field.
 */
function clone<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map(clone) as T;
  if (value instanceof Date) return new Date(value.getTime()) as T;
  if (Object.getPrototypeOf(value) !== Object.prototype || Object.hasOwn(value, '__proto__')) return structuredClone(value);
  const copy: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  for (const key in copy) {
    const field = copy[key];
    if (typeof field === 'object' && field !== null) copy[key] = clone(field);
  }
  return copy as T;
}

/*
 * A stored document holds each top-level Date as a bigint of its milliseconds: 24 bytes instead of a Date object's
 * 96, two per order. Nothing else stores bigints (MongoDB's driver would not either, without useBigInt64), so a bigint
 * is always such a date. Every document leaving the store, or evaluated by mingo, has its Dates back.
 */
function toStored<T extends Doc>(doc: T): T {
  return storeDatesInPlace(clone(doc));
}

/** Replaces a document's own top-level Dates by bigints; equal dates (createdAt and updatedAt, until it changes) share one. */
function storeDatesInPlace<T extends Doc>(doc: T): T {
  const fields = doc as Record<string, unknown>;
  let last: bigint | undefined;
  for (const key of Object.keys(fields)) {
    const value = fields[key];
    if (!(value instanceof Date) || Number.isNaN(value.getTime())) continue;
    const millis = BigInt(value.getTime());
    fields[key] = last === millis ? last : (last = millis);
  }
  return doc;
}

/** A stored document as callers see it, sharing nothing with the store (deep) or, for evaluation only, shallow. */
function fromStored<T extends Doc>(stored: T, deep = true): T {
  const doc = (deep ? clone(stored) : { ...stored }) as Record<string, unknown>;
  for (const key of Object.keys(doc)) {
    const value = doc[key];
    if (typeof value === 'bigint') doc[key] = new Date(Number(value));
  }
  return doc as T;
}

type SortValue = string | number | bigint;
/** How one top-level sort field's values compare, when all of them are of one kind mingo orders natively. */
function comparatorOf(values: unknown[]): ((a: SortValue, b: SortValue) => number) | undefined {
  const natural = (a: SortValue, b: SortValue) => (a < b ? -1 : a > b ? 1 : 0);
  if (values.every((value) => typeof value === 'string')) return natural;
  if (values.every((value) => typeof value === 'number' && !Number.isNaN(value))) return natural;
  if (values.every((value) => typeof value === 'bigint')) return natural;
  return undefined;
}

/** Stored `docs` in `sort` order as mingo's $sort puts them: a stable sort when every key's values are of one kind, else mingo. */
function sortDocs<T extends Doc>(docs: T[], sort: FindOptions['sort']): T[] {
  if (docs.length < 2 || Object.keys(sort).length === 0) return docs;
  const keys: { field: string; direction: number; compare: (a: SortValue, b: SortValue) => number }[] = [];
  for (const [field, direction] of Object.entries(sort)) {
    const compare = field.includes('.') ? undefined : comparatorOf(docs.map((doc) => doc[field]));
    if (!compare) {
      // Mixed kinds: mingo's order of types decides, on the documents as callers see them.
      const original = new Map(docs.map((doc) => [fromStored(doc, false), doc]));
      return (find([...original.keys()], {}).sort(sort).all() as T[]).map((doc) => original.get(doc)!);
    }
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

/** A skip and a limit as both backends read them: limit 0 or none is no limit. */
function windowOf(options: Pick<FindOptions, 'skip' | 'limit'>): { skip: number; limit: number } {
  const skip = options.skip && options.skip > 0 ? Math.floor(options.skip) : 0;
  const limit = options.limit && options.limit > 0 ? Math.floor(options.limit) : Infinity;
  return { skip, limit };
}

/** Every combination of one value per field, in order; undefined past `max` (an index would read too many ranges). */
function combinations(lists: KeyValue[][], max = 1000): KeyValue[][] | undefined {
  let result: KeyValue[][] = [[]];
  for (const list of lists) {
    result = result.flatMap((prefix) => list.map((value) => [...prefix, value]));
    if (result.length > max) return undefined;
  }
  return result;
}

interface Selection<T> {
  docs: T[];
  plan: QueryPlan;
}

/** An ordered index as a plan for one query: the ranges it reads and what it settles. */
interface OrderedPlan<T extends Doc> {
  index: OrderedIndex<T>;
  equal: KeyValue[][];
  range: Range | undefined;
  /** The index returns documents in the requested order (read backwards when `reverse`). */
  ordered: boolean;
  reverse: boolean;
  /** The bounds are exactly the filter: nothing needs evaluating. */
  exact: boolean;
  score: number;
}

class EmbeddedCollection<T extends Doc> implements DocumentCollection<T> {
  /** The _id index, holding every document: a sorted array costs 8 bytes a document where a Map costs about 100. */
  private readonly primary = new OrderedIndex<T>({ name: '_id_', key: { _id: 1 }, unique: true });
  private readonly ordered: OrderedIndex<T>[];
  private readonly multikey: MultikeyIndex<T>[];
  private settling = false;

  constructor(
    readonly name: string,
    indexes: IndexSpec[],
    private readonly persistence?: EmbeddedPersistence,
  ) {
    this.ordered = indexes.filter((spec) => !spec.multikey).map((spec) => new OrderedIndex<T>(spec));
    this.multikey = indexes.filter((spec) => spec.multikey).map((spec) => new MultikeyIndex<T>(spec));
    // Persisted documents are handed over: kept as read, their dates turned to bigints in place.
    for (const doc of persistence?.load(name) ?? []) this.store(undefined, doc as T, false, doc, true);
    this.settle();
    const primary = this.primary;
    persistence?.attach(name, function* () {
      for (const doc of primary.all()) yield fromStored(doc, false);
    });
  }

  private byId(id: unknown): T | undefined {
    return typeof id === 'string' ? this.primary.get([id]) : undefined;
  }

  /** Places what bulk inserts left pending in every index, so the next query reads them in order. */
  private settle(): void {
    this.primary.settle();
    for (const index of this.ordered) index.settle();
  }

  private orderedPlan(index: OrderedIndex<T>, conditions: Conditions, sort: FindOptions['sort']): OrderedPlan<T> | undefined {
    if (!index.usable) return undefined;
    const equal: KeyValue[][] = [];
    while (equal.length < index.declared && conditions.equal.has(index.fields[equal.length]!)) equal.push(conditions.equal.get(index.fields[equal.length]!)!);
    const range = equal.length < index.declared ? conditions.range.get(index.fields[equal.length]!) : undefined;
    const singleRange = equal.every((values) => values.length === 1);
    const fixed = new Set(index.fields.slice(0, equal.length));
    const sortKeys = Object.entries(sort).filter(([field]) => !fixed.has(field));
    let ordered = singleRange && sortKeys.length > 0 && sortKeys.length <= index.declared - equal.length;
    let relation = 0;
    sortKeys.forEach(([field, direction], j) => {
      const position = equal.length + j;
      const same = index.fields[position] === field ? direction * index.directions[position]! : 0;
      if (same === 0 || (relation !== 0 && same !== relation)) ordered = false;
      relation = same;
    });
    const bound = equal.length + (range ? 1 : 0);
    if (bound === 0 && !ordered) return undefined;
    const used = new Set(index.fields.slice(0, bound));
    const exact =
      !conditions.residual &&
      conditions.all.size === 0 &&
      [...conditions.equal.keys(), ...conditions.range.keys()].every((field) => used.has(field));
    return { index, equal, range, ordered, reverse: relation < 0, exact, score: bound * 4 + (ordered ? 2 : 0) + (exact ? 1 : 0) };
  }

  /** The documents matching `filter` in `sort` order, skipped and limited, read through the best index there is. */
  private select(filter: Filter, options: FindOptions): Selection<T> {
    const conditions = analyze(filter);
    const { skip, limit } = windowOf(options);
    let query: Query | undefined;
    const matches = (doc: T) => (query ??= new Query(filter)).test(fromStored(doc, false));
    const finish = (candidates: T[], exact: boolean, plan: Omit<QueryPlan, 'sortedInMemory'>): Selection<T> => {
      const matching = exact ? candidates : candidates.filter(matches);
      const sorted = sortDocs(matching, options.sort);
      return { docs: sorted.slice(skip, skip + limit), plan: { ...plan, sortedInMemory: true } };
    };

    const ids = conditions.equal.get('_id');
    if (ids) {
      const docs = ids.flatMap((id) => this.byId(id) ?? []);
      const exact = !conditions.residual && conditions.all.size === 0 && conditions.range.size === 0 && conditions.equal.size === 1;
      return finish(docs, exact, { index: '_id_', keysExamined: ids.length, docsExamined: docs.length });
    }

    for (const index of this.multikey) {
      const elements = conditions.all.get(index.field) ?? (conditions.equal.get(index.field)?.length === 1 ? conditions.equal.get(index.field) : undefined);
      if (!elements) continue;
      // The rarest element's documents in _id order, each looked up in the others' lists (index keys, not documents);
      // only those in every list are read, and evaluated when the filter asks more than these elements.
      const [driver, ...others] = elements.map((element) => index.holding(element as Scalar | null)).sort((a, b) => a.length - b.length);
      const exact = !conditions.residual && conditions.range.size === 0 && conditions.all.size + conditions.equal.size === 1;
      const sortKeys = Object.entries(options.sort);
      const inIdOrder = sortKeys.length === 1 && sortKeys[0]![0] === '_id';
      const step = inIdOrder && sortKeys[0]![1] === -1 ? -1 : 1;
      const out: T[] = [];
      let keysExamined = 0;
      let docsExamined = 0;
      let skipped = 0;
      for (let i = step === 1 ? 0 : driver!.length - 1; i >= 0 && i < driver!.length && (!inIdOrder || out.length < limit); i += step) {
        const doc = driver![i]!;
        keysExamined += 1 + others.length;
        if (!others.every((list) => index.listed(list, doc))) continue;
        if (!exact) {
          docsExamined++;
          if (!matches(doc)) continue;
        }
        if (inIdOrder && skipped++ < skip) continue;
        out.push(doc);
      }
      if (inIdOrder) return { docs: out, plan: { index: index.name, keysExamined, docsExamined: exact ? out.length : docsExamined, sortedInMemory: false } };
      return finish(out, true, { index: index.name, keysExamined, docsExamined: exact ? out.length : docsExamined });
    }

    let best: OrderedPlan<T> | undefined;
    for (const index of this.ordered) {
      const plan = this.orderedPlan(index, conditions, options.sort);
      if (plan && (!best || plan.score > best.score)) best = plan;
    }
    if (!best) {
      const docs = [...this.primary.all()];
      return finish(docs, Object.keys(filter).length === 0, { index: null, keysExamined: 0, docsExamined: docs.length });
    }
    const keys = combinations(best.equal);
    if (!keys) {
      const docs = [...this.primary.all()];
      return finish(docs, false, { index: null, keysExamined: 0, docsExamined: docs.length });
    }
    const spans = keys.map((key) => best.index.span(key as KeyPart[], best.range));
    if (best.ordered && spans.length === 1) {
      const [start, end] = spans[0]!;
      const at = (i: number) => best.index.at(best.reverse ? end - 1 - (i - start) : i);
      if (best.exact) {
        const from = Math.min(end, start + skip);
        const to = Math.min(end, from + limit);
        const docs: T[] = [];
        for (let i = from; i < to; i++) docs.push(at(i));
        return { docs, plan: { index: best.index.name, keysExamined: docs.length, docsExamined: docs.length, sortedInMemory: false } };
      }
      const docs: T[] = [];
      let examined = 0;
      let skipped = 0;
      for (let i = start; i < end && docs.length < limit; i++) {
        const doc = at(i);
        examined++;
        if (!matches(doc)) continue;
        if (skipped++ < skip) continue;
        docs.push(doc);
      }
      return { docs, plan: { index: best.index.name, keysExamined: examined, docsExamined: examined, sortedInMemory: false } };
    }
    const candidates: T[] = [];
    for (const [start, end] of spans) for (let i = start; i < end; i++) candidates.push(best.index.at(i));
    return finish(candidates, best.exact, { index: best.index.name, keysExamined: candidates.length, docsExamined: candidates.length });
  }

  private report(operation: StoreQueryEvent['operation'], filter: Filter, plan: QueryPlan): void {
    if (storeQueries.hasSubscribers) storeQueries.publish({ collection: this.name, operation, filter, plan } satisfies StoreQueryEvent);
  }

  async find(filter: Filter, options: FindOptions): Promise<T[]> {
    const { docs, plan } = this.select(filter, options);
    this.report('find', filter, plan);
    return docs.map((doc) => fromStored(doc));
  }

  async explain(filter: Filter, options: FindOptions): Promise<QueryPlan> {
    return this.select(filter, options).plan;
  }

  async findOne(filter: Filter): Promise<T | null> {
    const [doc] = await this.find(filter, { sort: { _id: 1 }, limit: 1 });
    return doc ?? null;
  }

  async count(filter: Filter): Promise<number> {
    if (Object.keys(filter).length === 0) return this.primary.size;
    const conditions = analyze(filter);
    let best: OrderedPlan<T> | undefined;
    for (const index of this.ordered) {
      const plan = this.orderedPlan(index, conditions, {});
      if (plan && (!best || plan.score > best.score)) best = plan;
    }
    const keys = best && combinations(best.equal);
    if (best?.exact && keys && !conditions.equal.has('_id')) {
      // Counted from positions alone, as MongoDB counts index keys without fetching documents.
      const spans = keys.map((key) => best.index.span(key as KeyPart[], best.range));
      const count = spans.reduce((sum, [start, end]) => sum + end - start, 0);
      this.report('count', filter, { index: best.index.name, keysExamined: count, docsExamined: 0, sortedInMemory: false });
      return count;
    }
    const { docs, plan } = this.select(filter, { sort: {} });
    this.report('count', filter, plan);
    return docs.length;
  }

  async insertOne(doc: T): Promise<void> {
    await this.insertMany([doc]);
  }

  async insertMany(docs: T[], options: { transfer?: boolean } = {}): Promise<void> {
    // Like an ordered insertMany in MongoDB: documents before the first duplicate are kept.
    try {
      for (const doc of docs) {
        if (options.transfer) this.store(undefined, doc, true, doc, true);
        else this.store(undefined, toStored(doc), true, doc);
      }
      // A bulk load leaves documents pending in its indexes; they are placed as soon as the loading code yields, so
      // the first request after a seed does not pay for it.
      if (options.transfer && !this.settling) {
        this.settling = true;
        setImmediate(() => {
          this.settling = false;
          this.settle();
        }).unref();
      }
    } finally {
      this.persistence?.sync();
    }
  }

  async findOneAndUpdate(filter: Filter, update: Update): Promise<T | null> {
    const { docs, plan } = this.select(filter, { sort: { _id: 1 }, limit: 1 });
    this.report('findOneAndUpdate', filter, plan);
    const current = docs[0];
    if (!current) return null;
    const next = fromStored(current);
    applyUpdate(next, update);
    this.store(current, toStored(next), true, next);
    this.persistence?.sync();
    return next;
  }

  /**
   * Replaces `previous` (if any) with `next` (stored form), enforcing every unique index first so a violation changes
   * nothing; then journals `written` (the caller's form) when persisting, before anything changes in memory (the
   * caller syncs before acknowledging).
   */
  private store(previous: T | undefined, next: T, persist = true, written: Doc = next, datesInPlace = false): void {
    if (!previous && this.primary.holds(next)) throw new DuplicateKeyError(this.name, '_id_');
    for (const index of this.ordered) {
      if (index.conflict(next) !== undefined) throw new DuplicateKeyError(this.name, index.name);
    }
    if (persist) this.persistence?.write(this.name, written);
    if (datesInPlace) storeDatesInPlace(next);
    const indexes = [this.primary, ...this.ordered, ...this.multikey];
    for (const index of indexes) {
      if (previous) index.replace(previous, next);
      else index.add(next);
    }
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
