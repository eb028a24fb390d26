// One document-store interface, two backends: MongoDB sends the stores' filter, sort and update documents through the
// driver, the embedded backend evaluates the very same documents with mingo, so tests exercise every production query.

export type Doc = { _id: string } & Record<string, unknown>;
export type Filter = Record<string, unknown>;
type Sort = Record<string, 1 | -1>;
export interface Update {
  $set?: Record<string, unknown>;
  $inc?: Record<string, number>;
  $unset?: Record<string, ''>;
}

export interface FindOptions {
  /** Required: no query depends on natural order, which differs between backends. */
  sort: Sort;
  skip?: number;
  limit?: number;
}

export interface IndexSpec {
  name: string;
  key: Record<string, 1 | -1>;
  unique?: boolean;
  /**
   * The first field holds an array and each element is indexed (a search's words). MongoDB detects this itself; the
   * embedded store keeps such an index as an inverted index, the documents holding each element in _id order.
   */
  multikey?: boolean;
}

/** How a query was answered, as MongoDB's explain reports it: which index, and how much it read. */
export interface QueryPlan {
  /** The index used; null when the whole collection was scanned. `_id_` for the primary key. */
  index: string | null;
  /** Index entries read. */
  keysExamined: number;
  /** Documents read (and evaluated, when the index alone does not settle the filter). */
  docsExamined: number;
  /** Whether the results were sorted after reading rather than read in index order. */
  sortedInMemory: boolean;
}

export interface DocumentCollection<T extends Doc> {
  readonly name: string;
  find(filter: Filter, options: FindOptions): Promise<T[]>;
  findOne(filter: Filter): Promise<T | null>;
  count(filter: Filter): Promise<number>;
  /** Throws DuplicateKeyError when a unique index would be violated. */
  insertOne(doc: T): Promise<void>;
  insertMany(docs: T[]): Promise<void>;
  /**
   * Atomically updates the first document matching `filter` and returns it as updated, or null when none matched.
   * A filter on the current version or status makes it a compare-and-set.
   */
  findOneAndUpdate(filter: Filter, update: Update): Promise<T | null>;
  /** How `find(filter, options)` would be answered: runs it and reports the plan (MongoDB's explain). */
  explain(filter: Filter, options: FindOptions): Promise<QueryPlan>;
}

export interface DocumentDatabase {
  readonly backend: 'mongodb' | 'embedded';
  collection<T extends Doc>(name: string, indexes: IndexSpec[]): Promise<DocumentCollection<T>>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** A unique index was violated; `index` names it so stores can map it to a domain error. */
export class DuplicateKeyError extends Error {
  override readonly name = 'DuplicateKeyError';
  constructor(
    readonly collection: string,
    readonly index: string,
  ) {
    super(`Duplicate key in ${collection} for index ${index}`);
  }
}
