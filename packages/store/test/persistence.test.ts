// DATA_DIR persistence of the embedded store: writes survive a reopen with their types, the journal is compacted into
// a snapshot, a torn last line is dropped, a corrupt one is refused, and a process killed mid-write keeps every write
// it had acknowledged.
import { spawn } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '@ordergraph/composition';
import { DirectoryPersistence, DuplicateKeyError, EmbeddedDatabase, PersistenceError, type IndexSpec } from '../src/index.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ordergraph-persistence-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const UNIQUE_SKU: IndexSpec[] = [{ name: 'sku_unique', key: { sku: 1 }, unique: true }];
const open = (compactEvery?: number) => new EmbeddedDatabase(new DirectoryPersistence(dir, compactEvery));
const journalLines = () => readFileSync(join(dir, 'journal.ndjson'), 'utf8').split('\n').filter(Boolean).length;

describe('DATA_DIR persistence', () => {
  it('keeps inserts and updates across a reopen, Dates and unique indexes included', async () => {
    const first = open();
    const items = await first.collection('items', UNIQUE_SKU);
    await items.insertMany([
      { _id: 'a', sku: 'A', createdAt: new Date('2026-01-02T03:04:05.006Z'), version: 0 },
      { _id: 'b', sku: 'B', createdAt: new Date('2026-01-03T00:00:00.000Z'), version: 0 },
    ]);
    await items.findOneAndUpdate({ _id: 'a', version: 0 }, { $set: { sku: 'A2' }, $inc: { version: 1 } });
    await first.close();

    const second = open();
    const reopened = await second.collection('items', UNIQUE_SKU);
    expect(await reopened.find({}, { sort: { _id: 1 } })).toEqual([
      { _id: 'a', sku: 'A2', createdAt: new Date('2026-01-02T03:04:05.006Z'), version: 1 },
      { _id: 'b', sku: 'B', createdAt: new Date('2026-01-03T00:00:00.000Z'), version: 0 },
    ]);
    expect(await reopened.count({ createdAt: { $gt: new Date('2026-01-02T12:00:00Z') } })).toBe(1);
    await expect(reopened.insertOne({ _id: 'c', sku: 'B' })).rejects.toBeInstanceOf(DuplicateKeyError);
    await second.close();
  });

  it('folds the journal into a snapshot every compactEvery writes', async () => {
    const db = open(3);
    const items = await db.collection('items', []);
    for (let n = 0; n < 5; n++) await items.insertOne({ _id: `item-${n}`, n });
    expect(journalLines()).toBe(2);
    const snapshot = readFileSync(join(dir, 'snapshot.ndjson'), 'utf8').split('\n').filter(Boolean);
    expect(snapshot.map((line) => (JSON.parse(line) as { collection: string }).collection)).toEqual(['items', 'items', 'items']);
    await db.close();
    const reopened = await open().collection('items', []);
    expect(await reopened.count({})).toBe(5);
  });

  it('keeps a collection not opened since across snapshots, and reads the one-document snapshot of earlier versions', async () => {
    const first = open(2);
    await (await first.collection('kept', [])).insertOne({ _id: 'k', at: new Date('2026-02-03T04:05:06.007Z') });
    await first.close();
    const second = open(2);
    const other = await second.collection('other', []);
    for (let n = 0; n < 6; n++) await other.insertOne({ _id: `o${n}`, n });
    await second.close();
    expect(await (await open().collection('kept', [])).find({}, { sort: { _id: 1 } })).toEqual([{ _id: 'k', at: new Date('2026-02-03T04:05:06.007Z') }]);

    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir);
    writeFileSync(join(dir, 'snapshot.json'), '{"items":[{"_id":"a","at":{"$date":"2026-01-02T00:00:00Z"}},{"_id":"b","n":1}]}');
    writeFileSync(join(dir, 'journal.ndjson'), '{"collection":"items","doc":{"_id":"b","n":2}}\n');
    const items = await open().collection('items', []);
    expect(await items.find({}, { sort: { _id: 1 } })).toEqual([{ _id: 'a', at: new Date('2026-01-02T00:00:00Z') }, { _id: 'b', n: 2 }]);
    expect(readdirSync(dir).sort()).toEqual(['journal.ndjson', 'snapshot.ndjson']);
  });

  it('drops a torn last line, a write cut short and never acknowledged', async () => {
    const db = open();
    await (await db.collection('items', [])).insertOne({ _id: 'kept' });
    await db.close();
    // As a process killed mid-append leaves the journal: one more whole entry, then half of one.
    appendFileSync(join(dir, 'journal.ndjson'), '{"collection":"items","doc":{"_id":"also-kept"}}\n{"collection":"items","doc":{"_i');
    const items = await open().collection('items', []);
    expect((await items.find({}, { sort: { _id: 1 } })).map((doc) => doc._id)).toEqual(['also-kept', 'kept']);
  });

  it('refuses to open over a corrupt journal line, naming the file and line', () => {
    open().close();
    appendFileSync(join(dir, 'journal.ndjson'), '{"collection":"items","doc":{"_id":"a"}}\nnot json\n');
    expect(() => open()).toThrow(PersistenceError);
    expect(() => open()).toThrow(/journal\.ndjson line 2 is corrupt/);
  });

  it('keeps every acknowledged write of a process killed mid-write', async () => {
    // One process (no tsx wrapper around it), so SIGKILL stops the very process that writes.
    const fixture = resolve(import.meta.dirname, 'fixtures/journal-writer.ts');
    const writer = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', fixture, dir, '40'], { cwd: REPO_ROOT });
    const acknowledged: string[] = [];
    let buffer = '';
    await new Promise<void>((done, fail) => {
      writer.once('error', fail);
      writer.stdout.on('data', (chunk: Buffer) => {
        buffer += chunk.toString();
        const lines = buffer.split('\n');
        buffer = lines.pop()!;
        acknowledged.push(...lines);
        // Well past several compactions, then killed wherever it is: appending, fsyncing or writing a snapshot.
        if (acknowledged.length >= 150 && writer.exitCode === null) {
          writer.kill('SIGKILL');
          done();
        }
      });
    });
    await new Promise((done) => writer.once('exit', done));
    const items = await open().collection('items', UNIQUE_SKU);
    const stored = new Set((await items.find({}, { sort: { _id: 1 } })).map((doc) => doc._id));
    expect(acknowledged.filter((id) => !stored.has(id))).toEqual([]);
    expect(stored.size).toBeGreaterThanOrEqual(acknowledged.length);
  }, 60_000);
});
