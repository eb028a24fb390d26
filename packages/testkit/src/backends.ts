// The store backends a contract suite runs against: always the embedded store, and MongoDB whenever MONGO_URL points
// at a server (each run in a database of its own, dropped afterwards).
import { randomUUID } from 'node:crypto';
import { EmbeddedDatabase, MongoDatabase, type DocumentDatabase } from '@ordergraph/common';

export interface Backend {
  name: 'embedded' | 'mongodb';
  /** A fresh, empty database. */
  open(): Promise<DocumentDatabase>;
}

export function storeBackends(): Backend[] {
  const backends: Backend[] = [{ name: 'embedded', open: async () => new EmbeddedDatabase() }];
  const url = process.env['MONGO_URL'];
  if (url) {
    backends.push({
      name: 'mongodb',
      async open() {
        const name = `ordergraph_test_${randomUUID().slice(0, 8)}`;
        const db = await MongoDatabase.connect(url, name);
        const close = db.close.bind(db);
        return Object.assign(db, {
          async close() {
            await db.dropDatabase();
            await close();
          },
        });
      },
    });
  }
  return backends;
}
