import type { Counter } from 'prom-client';
import { EmbeddedDatabase } from './embedded.js';
import { MongoDatabase } from './mongo.js';
import type { Doc, DocumentCollection, DocumentDatabase, IndexSpec } from './types.js';

export * from './types.js';
export { EmbeddedDatabase } from './embedded.js';
export { MongoDatabase } from './mongo.js';

/** MongoDB when a URL is given, otherwise the embedded store. */
export async function openDatabase(options: { mongoUrl?: string | undefined; database: string }): Promise<DocumentDatabase> {
  return options.mongoUrl ? MongoDatabase.connect(options.mongoUrl, options.database) : new EmbeddedDatabase();
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
      };
    },
  };
}
