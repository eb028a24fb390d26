// Keeps the embedded store's documents in a directory (DATA_DIR) across restarts: an fsynced append-only journal folded
// into snapshots, so a crash loses only an unacknowledged write. Hand-written: no maintained library offers one.
import { closeSync, existsSync, fstatSync, fsyncSync, ftruncateSync, mkdirSync, openSync, readSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { EJSON } from 'bson';
import type { Doc } from './types.js';

/** What the embedded store asks of a persistence layer. */
export interface EmbeddedPersistence {
  /** The documents persisted for a collection, handed over when it opens: from then on the collection holds them. */
  load(collection: string): Iterable<Doc>;
  /** Where a snapshot reads an open collection's documents, so they are never kept twice. */
  attach(collection: string, documents: () => Iterable<Doc>): void;
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

interface Entry {
  collection: string;
  doc: Doc;
}

/**
 * Calls `line` with each newline-terminated line of a file, read in chunks (a snapshot of a million documents is far
 * beyond what one string may hold); returns the byte length of the whole lines, before any torn last line.
 */
function forEachLine(path: string, line: (text: string, number: number) => void): number {
  const file = openSync(path, 'r');
  try {
    const chunk = Buffer.alloc(4 << 20);
    let carry = Buffer.alloc(0);
    let whole = 0;
    let number = 0;
    for (let read = readSync(file, chunk); read > 0; read = readSync(file, chunk)) {
      const data = carry.length > 0 ? Buffer.concat([carry, chunk.subarray(0, read)]) : chunk.subarray(0, read);
      let start = 0;
      for (let end = data.indexOf(10, start); end !== -1; end = data.indexOf(10, start)) {
        line(data.toString('utf8', start, end), ++number);
        whole += end + 1 - start;
        start = end + 1;
      }
      carry = Buffer.from(data.subarray(start));
    }
    return whole;
  } finally {
    closeSync(file);
  }
}

/*
 * Every write is appended to the journal, fsynced before the store acknowledges it (once for a whole insertMany). When
 * the journal holds `compactEvery` writes (or as many as there are documents, when more) it is folded into a snapshot:
 * one line per document, written to a temporary file, fsynced and renamed over the old one. A crash mid-append leaves
 * a torn last line, which the next open cuts off. Entries are whole documents, so replaying a journal over a snapshot
 * that already holds them changes nothing. An open collection's documents live in the store alone; a snapshot reads
 * them from it.
 */
export class DirectoryPersistence implements EmbeddedPersistence {
  /** Documents read at open, per collection, until the collection opens and takes them. */
  private readonly unclaimed = new Map<string, Map<string, Doc>>();
  private readonly attached = new Map<string, () => Iterable<Doc>>();
  private readonly snapshotPath: string;
  /** The single-document snapshot of earlier versions, read when no line snapshot exists yet. */
  private readonly legacySnapshotPath: string;
  private readonly journalPath: string;
  private journal: number | undefined;
  private writesSinceCompaction = 0;
  private unsynced = false;
  /** Set by a write that fills the journal; the snapshot is taken at the next sync, once the store holds that write. */
  private compactionDue = false;
  private documentCount = 0;

  constructor(
    readonly dir: string,
    private readonly compactEvery = 1000,
  ) {
    mkdirSync(dir, { recursive: true });
    this.snapshotPath = join(dir, 'snapshot.ndjson');
    this.legacySnapshotPath = join(dir, 'snapshot.json');
    this.journalPath = join(dir, 'journal.ndjson');
    this.readSnapshot();
    const journaled = this.replayJournal();
    this.documentCount = [...this.unclaimed.values()].reduce((sum, docs) => sum + docs.size, 0);
    if (existsSync(this.legacySnapshotPath)) {
      this.compact();
    } else {
      // Appends continue after the last whole entry; a torn line a crash left behind is cut off first.
      this.journal = openSync(this.journalPath, 'a+');
      if (fstatSync(this.journal).size !== journaled.bytes) ftruncateSync(this.journal, journaled.bytes);
      this.writesSinceCompaction = journaled.entries;
    }
  }

  /** How many documents the directory holds, all collections together. */
  get size(): number {
    return this.documentCount;
  }

  load(collection: string): Iterable<Doc> {
    const docs = this.unclaimed.get(collection);
    this.unclaimed.delete(collection);
    return docs?.values() ?? [];
  }

  attach(collection: string, documents: () => Iterable<Doc>): void {
    this.attached.set(collection, documents);
  }

  write(collection: string, doc: Doc): void {
    if (this.journal === undefined) throw new PersistenceError(`${this.dir} is closed`);
    writeSync(this.journal, `${serialize({ collection, doc })}\n`);
    this.unsynced = true;
    this.documentCount++;
    // Never more often than the data's own size, so a snapshot's cost is spread over as many writes (a seed of a
    // million documents is written out about twenty times, not a thousand).
    if (++this.writesSinceCompaction >= Math.max(this.compactEvery, this.documentCount)) this.compactionDue = true;
  }

  sync(): void {
    if (this.journal === undefined) return;
    if (this.compactionDue) {
      // The journal is fsynced first: a crash while the snapshot is written loses nothing acknowledged.
      if (this.unsynced) fsyncSync(this.journal);
      this.compact();
      return;
    }
    if (!this.unsynced) return;
    fsyncSync(this.journal);
    this.unsynced = false;
  }

  close(): void {
    if (this.journal === undefined) return;
    this.sync();
    closeSync(this.journal);
    this.journal = undefined;
  }

  private remember({ collection, doc }: Entry): void {
    let docs = this.unclaimed.get(collection);
    if (!docs) this.unclaimed.set(collection, (docs = new Map()));
    docs.set(doc._id, doc);
  }

  private readSnapshot(): void {
    if (existsSync(this.snapshotPath)) {
      forEachLine(this.snapshotPath, (line) => this.remember(deserialize(line) as Entry));
    } else if (existsSync(this.legacySnapshotPath)) {
      let text = '';
      forEachLine(this.legacySnapshotPath, (line) => (text += `${line}\n`));
      const snapshot = deserialize(text || '{}') as Record<string, Doc[]>;
      for (const [collection, docs] of Object.entries(snapshot)) for (const doc of docs) this.remember({ collection, doc });
    }
  }

  private replayJournal(): { entries: number; bytes: number } {
    if (!existsSync(this.journalPath)) return { entries: 0, bytes: 0 };
    let entries = 0;
    // The text after the last newline is a write cut short by a crash: never acknowledged, so dropped.
    const bytes = forEachLine(this.journalPath, (line, number) => {
      let entry: Entry;
      try {
        entry = deserialize(line) as Entry;
      } catch {
        throw new PersistenceError(`${this.journalPath} line ${number} is corrupt; move the file away to start from the snapshot`);
      }
      this.remember(entry);
      entries++;
    });
    return { entries, bytes };
  }

  /** Writes every document to a new snapshot atomically, then starts an empty journal. */
  private compact(): void {
    this.compactionDue = false;
    const temporary = `${this.snapshotPath}.tmp`;
    const file = openSync(temporary, 'w');
    let count = 0;
    try {
      let buffer = '';
      const flush = () => {
        writeSync(file, buffer);
        buffer = '';
      };
      const sources: [string, Iterable<Doc>][] = [
        ...[...this.attached].map(([collection, documents]): [string, Iterable<Doc>] => [collection, documents()]),
        ...[...this.unclaimed].map(([collection, docs]): [string, Iterable<Doc>] => [collection, docs.values()]),
      ];
      for (const [collection, docs] of sources) {
        for (const doc of docs) {
          buffer += `${serialize({ collection, doc })}\n`;
          count++;
          if (buffer.length > 1 << 20) flush();
        }
      }
      flush();
      fsyncSync(file);
    } finally {
      closeSync(file);
    }
    renameSync(temporary, this.snapshotPath);
    if (existsSync(this.legacySnapshotPath)) unlinkSync(this.legacySnapshotPath);
    this.syncDirectory();
    // A crash before the journal is emptied replays entries the snapshot already holds, which changes nothing.
    if (this.journal !== undefined) closeSync(this.journal);
    this.journal = openSync(this.journalPath, 'w');
    fsyncSync(this.journal);
    this.unsynced = false;
    this.syncDirectory();
    this.writesSinceCompaction = 0;
    this.documentCount = count;
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
