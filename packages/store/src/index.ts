import type { Counter } from 'prom-client';
import { join } from 'node:path';
import { EmbeddedDatabase } from './embedded.js';
import { MongoDatabase, type MongoSettings } from './mongo.js';
import { DirectoryPersistence } from './persistence.js';
import type { Doc, DocumentCollection, DocumentDatabase, IndexSpec } from './types.js';

export * from './types.js';
export { EmbeddedDatabase, storeQueries, type StoreQueryEvent } from './embedded.js';
export { MongoDatabase, type MongoSettings } from './mongo.js';
export { DirectoryPersistence, PersistenceError, type EmbeddedPersistence } from './persistence.js';

/**
 * One query for a batch of ids (a DataLoader's batch): the documents in key order, null for a missing id, as a
 * DataLoader batch function must return them.
 */
export async function findByIdsInKeyOrder<T extends Doc>(collection: DocumentCollection<T>, ids: readonly string[]): Promise<(T | null)[]> {
  const docs = await collection.find({ _id: { $in: [...new Set(ids)] } }, { sort: { _id: 1 } });
  const byId = new Map(docs.map((doc) => [doc._id, doc]));
  return ids.map((id) => byId.get(id) ?? null);
}

/** MongoDB when a URL is given, otherwise the embedded store: in memory, or kept in `<dataDir>/<database>`. */
export async function openDatabase(
  options: { mongoUrl?: string | undefined; database: string; dataDir?: string | undefined } & MongoSettings,
): Promise<DocumentDatabase> {
  if (options.mongoUrl) return MongoDatabase.connect(options.mongoUrl, options.database, options);
  return new EmbeddedDatabase(options.dataDir ? new DirectoryPersistence(join(options.dataDir, options.database)) : undefined);
}

/** Counts every collection operation, so metrics (and tests) can see how many store calls a request costs. */
export function instrumentDatabase(db: DocumentDatabase, counter: Counter<'collection' | 'operation'>): DocumentDatabase {
  return {
    backend: db.backend,
    ping: () => db.ping(),
    close: () => db.close(),
    async collection<T extends Doc>(name: string, indexes: IndexSpec[]): Promise<DocumentCollection<T>> {
      const inner = await db.collection<T>(name, indexes);
      const counted = <A extends unknown[], R>(operation: string, fn: (...args: A) => Promise<R>) =>
        (...args: A): Promise<R> => {
          counter.inc({ collection: name, operation });
          return fn(...args);
        };
      return {
        name,
        find: counted('find', inner.find.bind(inner)),
        findOne: counted('findOne', inner.findOne.bind(inner)),
        count: counted('count', inner.count.bind(inner)),
        insertOne: counted('insertOne', inner.insertOne.bind(inner)),
        insertMany: counted('insertMany', inner.insertMany.bind(inner)),
        findOneAndUpdate: counted('findOneAndUpdate', inner.findOneAndUpdate.bind(inner)),
        explain: inner.explain.bind(inner),
      };
    },
  };
}
