// Keeps the embedded store's documents in a directory (DATA_DIR) across restarts: an fsynced append-only journal folded
// into snapshots, so a crash loses only an unacknowledged write. Hand-written: no maintained library offers one.
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { EJSON } from 'bson';
import type { Doc } from './types.js';

/** What the embedded store asks of a persistence layer. */
export interface EmbeddedPersistence {
  /** The documents persisted for a collection, loaded when it opens. */
  load(collection: string): Doc[];
  /** Journals a document about to be stored; throws, and the write fails, when it cannot. */
  write(collection: string, doc: Doc): void;
  /** Makes every journaled write durable; the store calls it before acknowledging an operation. */
  sync(): void;
  close(): void;
}

export class PersistenceError extends Error {
  override readonly name = 'PersistenceError';
}

// Extended JSON keeps Dates (and every other BSON type) as they were, where plain JSON would turn them into strings.
const serialize = (value: unknown) => EJSON.stringify(value, { relaxed: true });
const deserialize = (text: string) => EJSON.parse(text, { relaxed: true }) as unknown;

/*
 * Every write is appended to the journal, fsynced before the store acknowledges it (once for a whole insertMany). At
 * open and every `compactEvery` writes (or as many as there are documents, when more) the journal is folded into a
 * snapshot, written to a temporary file, fsynced and renamed over the old one. A crash mid-append leaves a torn last
 * line, which the next open drops. Entries are whole documents, so replaying a journal over a snapshot that already
 * holds them changes nothing.
 */
export class DirectoryPersistence implements EmbeddedPersistence {
  private readonly documents = new Map<string, Map<string, Doc>>();
  private readonly snapshotPath: string;
  private readonly journalPath: string;
  private journal: number | undefined;
  private writesSinceCompaction = 0;
  private unsynced = false;

  constructor(
    readonly dir: string,
    private readonly compactEvery = 1000,
  ) {
    mkdirSync(dir, { recursive: true });
    this.snapshotPath = join(dir, 'snapshot.json');
    this.journalPath = join(dir, 'journal.ndjson');
    this.readSnapshot();
    this.replayJournal();
    this.compact();
  }

  /** How many documents the directory holds, all collections together. */
  get size(): number {
    return [...this.documents.values()].reduce((sum, docs) => sum + docs.size, 0);
  }

  load(collection: string): Doc[] {
    return [...(this.documents.get(collection)?.values() ?? [])];
  }

  write(collection: string, doc: Doc): void {
    if (this.journal === undefined) throw new PersistenceError(`${this.dir} is closed`);
    writeSync(this.journal, `${serialize({ collection, doc })}\n`);
    this.unsynced = true;
    this.remember(collection, doc);
    // Never more often than the data's own size, so a snapshot's cost is spread over as many writes (a 1000-document
    // seed is not rewritten 1000 times).
    if (++this.writesSinceCompaction >= Math.max(this.compactEvery, this.size)) this.compact();
  }

  sync(): void {
    if (this.journal === undefined || !this.unsynced) return;
    fsyncSync(this.journal);
    this.unsynced = false;
  }

  close(): void {
    if (this.journal === undefined) return;
    this.sync();
    closeSync(this.journal);
    this.journal = undefined;
  }

  private remember(collection: string, doc: Doc): void {
    let docs = this.documents.get(collection);
    if (!docs) this.documents.set(collection, (docs = new Map()));
    docs.set(doc._id, doc);
  }

  private readSnapshot(): void {
    if (!existsSync(this.snapshotPath)) return;
    const snapshot = deserialize(readFileSync(this.snapshotPath, 'utf8')) as Record<string, Doc[]>;
    for (const [collection, docs] of Object.entries(snapshot)) for (const doc of docs) this.remember(collection, doc);
  }

  private replayJournal(): void {
    if (!existsSync(this.journalPath)) return;
    const lines = readFileSync(this.journalPath, 'utf8').split('\n');
    // The text after the last newline is a write cut short by a crash: never acknowledged, so dropped.
    lines.pop();
    lines.forEach((line, index) => {
      let entry: { collection: string; doc: Doc };
      try {
        entry = deserialize(line) as typeof entry;
      } catch {
        throw new PersistenceError(`${this.journalPath} line ${index + 1} is corrupt; move the file away to start from the snapshot`);
      }
      this.remember(entry.collection, entry.doc);
    });
  }

  /** Writes every document to a new snapshot atomically, then starts an empty journal. */
  private compact(): void {
    const temporary = `${this.snapshotPath}.tmp`;
    const snapshot = Object.fromEntries([...this.documents].map(([collection, docs]) => [collection, [...docs.values()]]));
    const file = openSync(temporary, 'w');
    try {
      writeSync(file, serialize(snapshot));
      fsyncSync(file);
    } finally {
      closeSync(file);
    }
    renameSync(temporary, this.snapshotPath);
    this.syncDirectory();
    // A crash before the journal is emptied replays entries the snapshot already holds, which changes nothing.
    this.close();
    this.journal = openSync(this.journalPath, 'w');
    fsyncSync(this.journal);
    this.unsynced = false;
    this.syncDirectory();
    this.writesSinceCompaction = 0;
  }

  /** Makes a rename or a new file in the directory itself durable. */
  private syncDirectory(): void {
    const directory = openSync(this.dir, 'r');
    try {
      fsyncSync(directory);
    } finally {
      closeSync(directory);
    }
  }
}
