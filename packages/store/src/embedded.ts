// The in-process backend: one live copy of each document, a row of its collection's table (held column by column, see
// ./table.ts), queries planned on the indexes the stores declare (as MongoDB plans them) and evaluated by mingo with
// the same documents MongoDB receives.
import { channel } from 'node:diagnostics_channel';
import { find, Query, update as applyUpdate } from 'mingo';
import { MultikeyIndex, OrderedIndex } from './indexes.js';
import { analyze, type Conditions, type KeyPart, type KeyValue, type Range, type Scalar } from './plan.js';
import type { EmbeddedPersistence } from './persistence.js';
import { Table } from './table.js';
import { DuplicateKeyError, type Doc, type DocumentCollection, type DocumentDatabase, type Filter, type FindOptions, type IndexSpec, type QueryPlan, type Update } from './types.js';

/** Every query the embedded store answers, with its plan: tests subscribe to assert that none scans a collection. */
export const storeQueries = channel('ordergraph:store:query');
export interface StoreQueryEvent {
  collection: string;
  operation: 'find' | 'count' | 'findOneAndUpdate';
  filter: Filter;
  plan: QueryPlan;
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

/** A sort value as compared natively: a valid Date as the bigint of its milliseconds, as date columns give them. */
const sortValue = (value: unknown): unknown => (value instanceof Date && !Number.isNaN(value.getTime()) ? BigInt(value.getTime()) : value);

/** `rows` in `sort` order as mingo's $sort puts them: a stable sort when every key's values are of one kind, else mingo. */
function sortRows(table: Table, rows: number[], sort: FindOptions['sort']): number[] {
  if (rows.length < 2 || Object.keys(sort).length === 0) return rows;
  const keys: { values: SortValue[]; direction: number; compare: (a: SortValue, b: SortValue) => number }[] = [];
  for (const [field, direction] of Object.entries(sort)) {
    const column = field.includes('.') ? undefined : table.column(field);
    const values = column && rows.map((row) => sortValue(column.key(row)));
    const compare = values && comparatorOf(values);
    if (!compare) {
      // Mixed kinds: mingo's order of types decides, on the documents as callers see them.
      const docs = rows.map((row) => table.read(row));
      const original = new Map(docs.map((doc, i) => [doc, rows[i]!]));
      return (find(docs, {}).sort(sort).all() as Doc[]).map((doc) => original.get(doc)!);
    }
    keys.push({ values: values as SortValue[], direction, compare });
  }
  const order = rows.map((_, i) => i);
  order.sort((a, b) => {
    for (const { values, direction, compare } of keys) {
      const result = compare(values[a]!, values[b]!);
      if (result !== 0) return result * direction;
    }
    return 0;
  });
  return order.map((i) => rows[i]!);
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

interface Selection {
  rows: number[];
  plan: QueryPlan;
}

/** An ordered index as a plan for one query: the ranges it reads and what it settles. */
interface OrderedPlan {
  index: OrderedIndex;
  equal: KeyValue[][];
  range: Range | undefined;
  /** The index returns rows in the requested order (read backwards when `reverse`). */
  ordered: boolean;
  reverse: boolean;
  /** The bounds are exactly the filter: nothing needs evaluating. */
  exact: boolean;
  score: number;
}

class EmbeddedCollection<T extends Doc> implements DocumentCollection<T> {
  private readonly table = new Table();
  /** The _id index, holding every row: 4 bytes a document, in blocks. */
  private readonly primary: OrderedIndex;
  private readonly ordered: OrderedIndex[];
  private readonly multikey: MultikeyIndex[];

  constructor(
    readonly name: string,
    indexes: IndexSpec[],
    private readonly persistence?: EmbeddedPersistence,
  ) {
    const table = this.table;
    this.primary = new OrderedIndex({ name: '_id_', key: { _id: 1 }, unique: true }, table);
    this.ordered = indexes.filter((spec) => !spec.multikey).map((spec) => new OrderedIndex(spec, table));
    this.multikey = indexes.filter((spec) => spec.multikey).map((spec) => new MultikeyIndex(spec, table));
    for (const doc of persistence?.load(name) ?? []) this.store(undefined, doc, false);
    const primary = this.primary;
    persistence?.attach(name, function* () {
      for (const row of primary.all()) yield table.read(row);
    });
  }

  private byId(id: unknown): number | undefined {
    return typeof id === 'string' ? this.primary.get([id]) : undefined;
  }

  private read(row: number): T {
    return this.table.read(row) as T;
  }

  private orderedPlan(index: OrderedIndex, conditions: Conditions, sort: FindOptions['sort']): OrderedPlan | undefined {
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
  private select(filter: Filter, options: FindOptions): Selection {
    const conditions = analyze(filter);
    const { skip, limit } = windowOf(options);
    let query: Query | undefined;
    const matches = (row: number) => (query ??= new Query(filter)).test(this.table.read(row));
    const finish = (candidates: number[], exact: boolean, plan: Omit<QueryPlan, 'sortedInMemory'>): Selection => {
      const matching = exact ? candidates : candidates.filter(matches);
      const sorted = sortRows(this.table, matching, options.sort);
      return { rows: sorted.slice(skip, skip + limit), plan: { ...plan, sortedInMemory: true } };
    };

    const ids = conditions.equal.get('_id');
    if (ids) {
      const rows = ids.flatMap((id) => this.byId(id) ?? []);
      const exact = !conditions.residual && conditions.all.size === 0 && conditions.range.size === 0 && conditions.equal.size === 1;
      return finish(rows, exact, { index: '_id_', keysExamined: ids.length, docsExamined: rows.length });
    }

    for (const index of this.multikey) {
      const elements = conditions.all.get(index.field) ?? (conditions.equal.get(index.field)?.length === 1 ? conditions.equal.get(index.field) : undefined);
      if (!elements) continue;
      // The rarest element's rows in _id order, each looked up in the others' lists (index keys, not documents);
      // only those in every list are read, and evaluated when the filter asks more than these elements.
      const [driver, ...others] = elements.map((element) => index.holding(element as Scalar | null)).sort((a, b) => a.length - b.length);
      const exact = !conditions.residual && conditions.range.size === 0 && conditions.all.size + conditions.equal.size === 1;
      const sortKeys = Object.entries(options.sort);
      const inIdOrder = sortKeys.length === 1 && sortKeys[0]![0] === '_id';
      const step = inIdOrder && sortKeys[0]![1] === -1 ? -1 : 1;
      const out: number[] = [];
      let keysExamined = 0;
      let docsExamined = 0;
      let skipped = 0;
      // Forwards, each other list is walked with a cursor (the driver's rows come in _id order); backwards, searched.
      const cursors = others.map(() => 0);
      const inEvery = (row: number) =>
        others.every((list, j) => {
          if (step === -1) return index.listed(list, row);
          cursors[j] = index.seek(list, row, cursors[j]!);
          return list[cursors[j]!] === row;
        });
      for (let i = step === 1 ? 0 : driver!.length - 1; i >= 0 && i < driver!.length && (!inIdOrder || out.length < limit); i += step) {
        const row = driver![i]!;
        keysExamined += 1 + others.length;
        if (!inEvery(row)) continue;
        if (!exact) {
          docsExamined++;
          if (!matches(row)) continue;
        }
        if (inIdOrder && skipped++ < skip) continue;
        out.push(row);
      }
      if (inIdOrder) return { rows: out, plan: { index: index.name, keysExamined, docsExamined: exact ? out.length : docsExamined, sortedInMemory: false } };
      return finish(out, true, { index: index.name, keysExamined, docsExamined: exact ? out.length : docsExamined });
    }

    let best: OrderedPlan | undefined;
    for (const index of this.ordered) {
      const plan = this.orderedPlan(index, conditions, options.sort);
      if (plan && (!best || plan.score > best.score)) best = plan;
    }
    if (!best) {
      const rows = [...this.primary.all()];
      return finish(rows, Object.keys(filter).length === 0, { index: null, keysExamined: 0, docsExamined: rows.length });
    }
    const keys = combinations(best.equal);
    if (!keys) {
      const rows = [...this.primary.all()];
      return finish(rows, false, { index: null, keysExamined: 0, docsExamined: rows.length });
    }
    const spans = keys.map((key) => best.index.span(key as KeyPart[], best.range));
    if (best.ordered && spans.length === 1) {
      const [start, end] = spans[0]!;
      const at = (i: number) => best.index.at(best.reverse ? end - 1 - (i - start) : i);
      if (best.exact) {
        const from = Math.min(end, start + skip);
        const to = Math.min(end, from + limit);
        const rows: number[] = [];
        for (let i = from; i < to; i++) rows.push(at(i));
        return { rows, plan: { index: best.index.name, keysExamined: rows.length, docsExamined: rows.length, sortedInMemory: false } };
      }
      const rows: number[] = [];
      let examined = 0;
      let skipped = 0;
      for (let i = start; i < end && rows.length < limit; i++) {
        const row = at(i);
        examined++;
        if (!matches(row)) continue;
        if (skipped++ < skip) continue;
        rows.push(row);
      }
      return { rows, plan: { index: best.index.name, keysExamined: examined, docsExamined: examined, sortedInMemory: false } };
    }
    const candidates: number[] = [];
    for (const [start, end] of spans) for (let i = start; i < end; i++) candidates.push(best.index.at(i));
    return finish(candidates, best.exact, { index: best.index.name, keysExamined: candidates.length, docsExamined: candidates.length });
  }

  private report(operation: StoreQueryEvent['operation'], filter: Filter, plan: QueryPlan): void {
    if (storeQueries.hasSubscribers) storeQueries.publish({ collection: this.name, operation, filter, plan } satisfies StoreQueryEvent);
  }

  async find(filter: Filter, options: FindOptions): Promise<T[]> {
    const { rows, plan } = this.select(filter, options);
    this.report('find', filter, plan);
    return rows.map((row) => this.read(row));
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
    let best: OrderedPlan | undefined;
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
    const { rows, plan } = this.select(filter, { sort: {} });
    this.report('count', filter, plan);
    return rows.length;
  }

  async insertOne(doc: T): Promise<void> {
    await this.insertMany([doc]);
  }

  async insertMany(docs: T[]): Promise<void> {
    // Like an ordered insertMany in MongoDB: documents before the first duplicate are kept.
    try {
      for (const doc of docs) this.store(undefined, doc, true);
    } finally {
      this.persistence?.sync();
    }
  }

  async findOneAndUpdate(filter: Filter, update: Update): Promise<T | null> {
    const { rows, plan } = this.select(filter, { sort: { _id: 1 }, limit: 1 });
    this.report('findOneAndUpdate', filter, plan);
    const row = rows[0];
    if (row === undefined) return null;
    const next = this.read(row);
    applyUpdate(next, update);
    this.store(row, next, true);
    this.persistence?.sync();
    return next;
  }

  /**
   * Stores `next` in `row`, or in a new row when none is given, enforcing every unique index first so a violation
   * changes nothing; then journals it when persisting, before anything changes in memory (the caller syncs before
   * acknowledging). An update moves a row only in the indexes whose key it changes: the row's number stays.
   */
  private store(row: number | undefined, next: Doc, persist: boolean): void {
    const slot = row === undefined ? this.primary.slot(next) : undefined;
    if (row === undefined && !slot) throw new DuplicateKeyError(this.name, '_id_');
    for (const index of this.ordered) {
      if (index.conflict(next) !== undefined) throw new DuplicateKeyError(this.name, index.name);
    }
    if (persist) this.persistence?.write(this.name, next);
    if (row === undefined) {
      const added = this.table.append(next);
      this.primary.addAt(slot!, added);
      for (const index of [...this.ordered, ...this.multikey]) index.add(added);
      return;
    }
    const indexes = [this.primary, ...this.ordered, ...this.multikey];
    const moving = indexes.filter((index) => !index.keeps(row, next));
    for (const index of moving) index.remove(row);
    this.table.write(row, next);
    for (const index of moving) index.add(row);
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
