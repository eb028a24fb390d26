// The in-process backend: documents in memory, queries evaluated by mingo with the same documents MongoDB receives.
import { find, update as applyUpdate } from 'mingo';
import type { EmbeddedPersistence } from './persistence.js';
import { DuplicateKeyError, type Doc, type DocumentCollection, type DocumentDatabase, type Filter, type FindOptions, type IndexSpec, type Update } from './types.js';

const clone = <T>(value: T): T => structuredClone(value);

/** MongoDB indexes a missing field as null, so two documents without it collide on a unique index. */
const indexKey = (spec: IndexSpec, doc: Doc): string =>
  JSON.stringify(Object.keys(spec.key).map((field) => doc[field] ?? null));

class EmbeddedCollection<T extends Doc> implements DocumentCollection<T> {
  private readonly docs = new Map<string, T>();
  /** Per unique index: the indexed values of each document -> its _id. */
  private readonly uniqueIndexes: { spec: IndexSpec; owners: Map<string, string> }[];

  constructor(
    readonly name: string,
    indexes: IndexSpec[],
    private readonly persistence?: EmbeddedPersistence,
  ) {
    this.uniqueIndexes = indexes.filter((index) => index.unique).map((spec) => ({ spec, owners: new Map() }));
    for (const doc of persistence?.load(name) ?? []) this.store(undefined, doc as T, false);
  }

  async find(filter: Filter, options: FindOptions): Promise<T[]> {
    let cursor = find([...this.docs.values()], filter).sort(options.sort);
    if (options.skip) cursor = cursor.skip(options.skip);
    if (options.limit) cursor = cursor.limit(options.limit);
    return cursor.all().map((doc) => clone(doc as T));
  }

  async findOne(filter: Filter): Promise<T | null> {
    const [doc] = await this.find(filter, { sort: { _id: 1 }, limit: 1 });
    return doc ?? null;
  }

  async count(filter: Filter): Promise<number> {
    return find([...this.docs.values()], filter).all().length;
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
    const [current] = find([...this.docs.values()], filter).sort({ _id: 1 }).limit(1).all() as T[];
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
