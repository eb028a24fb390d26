// The store backends a contract suite runs against: always the embedded store, in memory and kept in a DATA_DIR
// directory, and MongoDB whenever MONGO_URL points at a server (each run in a database of its own, dropped afterwards).
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DirectoryPersistence, EmbeddedDatabase, MongoDatabase, type DocumentDatabase } from '@ordergraph/store';

export interface Backend {
  name: 'embedded' | 'embedded in DATA_DIR' | 'mongodb';
  /** A fresh, empty database. */
  open(): Promise<DocumentDatabase>;
}

export function storeBackends(): Backend[] {
  const backends: Backend[] = [
    { name: 'embedded', open: async () => new EmbeddedDatabase() },
    {
      name: 'embedded in DATA_DIR',
      async open() {
        const dir = mkdtempSync(join(tmpdir(), 'ordergraph-data-'));
        // Compacting every few writes puts snapshots and journal replays on the suites' paths too.
        const db = new EmbeddedDatabase(new DirectoryPersistence(dir, 5));
        const close = db.close.bind(db);
        return Object.assign(db, {
          async close() {
            await close();
            rmSync(dir, { recursive: true, force: true });
          },
        });
      },
    },
  ];
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
