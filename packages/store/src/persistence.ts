// Keeps the embedded store's documents in a directory (DATA_DIR) across restarts: an fsynced append-only journal folded
// into snapshots, so a crash loses only an unacknowledged write. Hand-written: no maintained library offers one.
import { closeSync, existsSync, fstatSync, fsyncSync, ftruncateSync, mkdirSync, openSync, readFileSync, readSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { EJSON } from 'bson';
import type { Doc } from './types.js';

/** What the embedded store asks of a persistence layer. */
export interface EmbeddedPersistence {
  /** The documents persisted for a collection, read once when it opens: from then on the collection holds them. */
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

/*
 * Entries are relaxed Extended JSON, which keeps Dates (and every other BSON type) as they were where plain JSON would
 * turn them into strings. What documents hold (plain values, arrays, objects, Dates; the store's bigint dates) is
 * written and read by JSON itself with the few Extended JSON forms they need, several times faster than the EJSON
 * library; a line with any other `$` key is read by the library.
 */
function replacer(this: Record<string, unknown>, key: string, value: unknown): unknown {
  const raw = this[key];
  if (raw instanceof Date) return Number.isNaN(raw.getTime()) ? { $date: { $numberLong: 'NaN' } } : { $date: raw.toISOString() };
  if (typeof raw === 'bigint') return { $date: new Date(Number(raw)).toISOString() };
  if (typeof raw === 'number' && (!Number.isFinite(raw) || Object.is(raw, -0))) return { $numberDouble: Object.is(raw, -0) ? '-0.0' : String(raw) };
  return value;
}
const serialize = (value: unknown): string => JSON.stringify(value, replacer);

/** Repeated strings of a journal replay (an order's user and product IDs) kept once while the journal holds them. */
type Intern = (text: string) => string;

/** Turns the Extended JSON forms `serialize` writes back into values, strings through `intern` (but _ids). */
function revive(value: unknown, intern?: Intern): unknown {
  if (typeof value === 'string') return intern ? intern(value) : value;
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = revive(value[i], intern);
    return value;
  }
  const object = value as Record<string, unknown>;
  for (const key in object) {
    const field = object[key];
    if (typeof field === 'string') {
      if (intern && key !== '_id') object[key] = intern(field);
      continue;
    }
    if (typeof field !== 'object' || field === null) continue;
    const date = (field as { $date?: unknown }).$date;
    const double = (field as { $numberDouble?: unknown }).$numberDouble;
    if (typeof date === 'string' && Object.keys(field).length === 1) object[key] = new Date(date);
    else if (typeof double === 'string' && Object.keys(field).length === 1) object[key] = Number(double);
    else object[key] = revive(field, intern);
  }
  return object;
}

/** An intern table for one load: strings up to 64 characters, each kept once. */
function interning(): Intern {
  const strings = new Map<string, string>();
  return (text) => {
    if (text.length > 64) return text;
    const known = strings.get(text);
    if (known !== undefined) return known;
    strings.set(text, text);
    return text;
  };
}
const OTHER_FORMS = /"\$(?!date"|numberDouble")[A-Za-z]/;
const deserialize = (text: string, intern?: Intern): unknown => (OTHER_FORMS.test(text) ? EJSON.parse(text, { relaxed: true }) : revive(JSON.parse(text), intern));

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
 * the journal holds `compactEvery` writes and is as large as the snapshot, it is folded into a new snapshot: one line
 * per document, written to a temporary file, fsynced and renamed over the old one (so snapshots cost writes in
 * proportion). A crash mid-append leaves a torn last line, which the next open cuts off. Entries are whole
 * documents, and a journal entry replaces the snapshot's document of the same _id.
 *
 * Nothing is held twice: at open only the journal is read; a collection streams its documents from the snapshot when
 * it opens, and from then on the store alone holds them (a snapshot reads them from it).
 */
export class DirectoryPersistence implements EmbeddedPersistence {
  /** Journal entries read at open, per collection and _id, until their collection opens and takes them. */
  private readonly journaled = new Map<string, Map<string, Doc>>();
  private readonly attached = new Map<string, () => Iterable<Doc>>();
  private readonly snapshotPath: string;
  /** The single-document snapshot of earlier versions, read when no line snapshot exists yet. */
  private readonly legacySnapshotPath: string;
  private readonly journalPath: string;
  private journal: number | undefined;
  private writesSinceCompaction = 0;
  private journalBytes = 0;
  private snapshotBytes = 0;
  private unsynced = false;
  /** Set by a write that fills the journal; the snapshot is taken at the next sync, once the store holds that write. */
  private compactionDue = false;
  /** The collections the snapshot holds, once known (read from it at most once). */
  private snapshotNames: Set<string> | undefined;

  constructor(
    readonly dir: string,
    private readonly compactEvery = 1000,
  ) {
    mkdirSync(dir, { recursive: true });
    this.snapshotPath = join(dir, 'snapshot.ndjson');
    this.legacySnapshotPath = join(dir, 'snapshot.json');
    this.journalPath = join(dir, 'journal.ndjson');
    const journaled = this.replayJournal();
    if (existsSync(this.legacySnapshotPath) && !existsSync(this.snapshotPath)) {
      // Rewritten once in the line format, with the journal folded in.
      for (const entry of this.legacyEntries()) if (!this.journaled.get(entry.collection)?.has(entry.doc._id)) this.remember(entry);
      this.compact();
      return;
    }
    this.snapshotBytes = existsSync(this.snapshotPath) ? statSync(this.snapshotPath).size : 0;
    // Appends continue after the last whole entry; a torn line a crash left behind is cut off first.
    this.journal = openSync(this.journalPath, 'a+');
    if (fstatSync(this.journal).size !== journaled.bytes) ftruncateSync(this.journal, journaled.bytes);
    this.writesSinceCompaction = journaled.entries;
    this.journalBytes = journaled.bytes;
  }

  /** The snapshot's documents of `collection` a journal entry has not replaced, then the journal's, each once. */
  private *persisted(collection: string): Generator<Doc> {
    const replaced = this.journaled.get(collection);
    if (existsSync(this.snapshotPath)) {
      const prefix = `{"collection":${JSON.stringify(collection)},`;
      const docs: Doc[] = [];
      // Read in chunks; documents are handed over a chunk's worth at a time. Their strings are not interned here:
      // the embedded store keeps each repeated string once itself, and a second table would only cost time.
      for (const lines of chunkedLines(this.snapshotPath)) {
        for (const line of lines) {
          if (!line.startsWith(prefix) && line.startsWith('{"collection":')) continue;
          const entry = deserialize(line) as Entry;
          if (entry.collection === collection && !replaced?.has(entry.doc._id)) docs.push(entry.doc);
        }
        yield* docs.splice(0);
      }
    }
    if (replaced) yield* replaced.values();
  }

  load(collection: string): Iterable<Doc> {
    const persistence = this;
    return (function* () {
      yield* persistence.persisted(collection);
      persistence.journaled.delete(collection);
    })();
  }

  attach(collection: string, documents: () => Iterable<Doc>): void {
    this.attached.set(collection, documents);
  }

  write(collection: string, doc: Doc): void {
    if (this.journal === undefined) throw new PersistenceError(`${this.dir} is closed`);
    const line = `${serialize({ collection, doc })}\n`;
    writeSync(this.journal, line);
    this.unsynced = true;
    this.journalBytes += Buffer.byteLength(line);
    // Never before the journal is as large as the snapshot, so a snapshot's cost is spread over as many writes (a
    // seed of a million documents is written out about twenty times, not a thousand).
    if (++this.writesSinceCompaction >= this.compactEvery && this.journalBytes >= this.snapshotBytes) this.compactionDue = true;
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
    let docs = this.journaled.get(collection);
    if (!docs) this.journaled.set(collection, (docs = new Map()));
    docs.set(doc._id, doc);
  }

  private legacyEntries(): Entry[] {
    // One JSON document, no larger than a string may be: earlier versions wrote it as one.
    const snapshot = EJSON.parse(readFileSync(this.legacySnapshotPath, 'utf8') || '{}', { relaxed: true }) as Record<string, Doc[]>;
    return Object.entries(snapshot).flatMap(([collection, docs]) => docs.map((doc) => ({ collection, doc })));
  }

  private replayJournal(): { entries: number; bytes: number } {
    if (!existsSync(this.journalPath)) return { entries: 0, bytes: 0 };
    let entries = 0;
    const intern = interning();
    // The text after the last newline is a write cut short by a crash: never acknowledged, so dropped.
    const bytes = forEachLine(this.journalPath, (line, number) => {
      let entry: Entry;
      try {
        entry = deserialize(line, intern) as Entry;
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
    let bytes = 0;
    const written = new Set<string>();
    try {
      let buffer = '';
      const flush = () => {
        bytes += writeSync(file, buffer);
        buffer = '';
      };
      const add = (collection: string, doc: Doc) => {
        buffer += `${serialize({ collection, doc })}\n`;
        if (buffer.length > 1 << 20) flush();
      };
      for (const [collection, documents] of this.attached) for (const doc of documents()) add(collection, doc);
      for (const collection of this.attached.keys()) written.add(collection);
      // Collections not opened yet: as the old snapshot and the journal hold them.
      const unopened = new Set([...this.journaled.keys(), ...this.collectionsInSnapshot()].filter((name) => !this.attached.has(name)));
      for (const collection of unopened) {
        for (const doc of this.persisted(collection)) add(collection, doc);
        written.add(collection);
      }
      flush();
      fsyncSync(file);
    } finally {
      closeSync(file);
    }
    renameSync(temporary, this.snapshotPath);
    if (existsSync(this.legacySnapshotPath)) unlinkSync(this.legacySnapshotPath);
    this.syncDirectory();
    this.journaled.clear();
    // A crash before the journal is emptied replays entries the snapshot already holds, which changes nothing.
    if (this.journal !== undefined) closeSync(this.journal);
    this.journal = openSync(this.journalPath, 'w');
    fsyncSync(this.journal);
    this.unsynced = false;
    this.syncDirectory();
    this.writesSinceCompaction = 0;
    this.journalBytes = 0;
    this.snapshotBytes = bytes;
    this.snapshotNames = written;
  }

  private collectionsInSnapshot(): Set<string> {
    if (!this.snapshotNames) this.snapshotNames = existsSync(this.snapshotPath) ? snapshotCollections(this.snapshotPath) : new Set();
    return this.snapshotNames;
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

/** The lines of a file a chunk (4 MiB) at a time, without the text after the last newline. */
function* chunkedLines(path: string): Generator<string[]> {
  const file = openSync(path, 'r');
  try {
    const chunk = Buffer.alloc(4 << 20);
    let carry = Buffer.alloc(0);
    for (let read = readSync(file, chunk); read > 0; read = readSync(file, chunk)) {
      const data = carry.length > 0 ? Buffer.concat([carry, chunk.subarray(0, read)]) : chunk.subarray(0, read);
      const lines: string[] = [];
      let start = 0;
      for (let end = data.indexOf(10, start); end !== -1; end = data.indexOf(10, start)) {
        lines.push(data.toString('utf8', start, end));
        start = end + 1;
      }
      carry = Buffer.from(data.subarray(start));
      yield lines;
    }
  } finally {
    closeSync(file);
  }
}

/** The collections a line snapshot holds, read from each line's opening. */
function snapshotCollections(path: string): Set<string> {
  const names = new Set<string>();
  const opening = /^\{"collection":("(?:[^"\\]|\\.)*")/;
  for (const lines of chunkedLines(path)) for (const line of lines) names.add(JSON.parse(opening.exec(line)?.[1] ?? '""') as string);
  return names;
}
