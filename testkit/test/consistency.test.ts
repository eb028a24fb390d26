import { describe, expect, it } from 'vitest';
import { HistoryRecorder, checkHistory, formatConsistencyReport, type FailedWrite, type Read, type Write } from '../src/consistency.js';

// Hand-made histories of register `a` (and `b`): writes of rising versions, reads placed before, beside and after them.
const write = (version: number, invokedAt: number, acknowledgedAt: number, register = 'a'): Write => ({ register, version, invokedAt, acknowledgedAt });
const read = (version: number, startedAt: number, endedAt: number, more: Partial<Read> = {}): Read => ({
  register: 'a',
  path: 'product',
  replica: 0,
  startedAt,
  endedAt,
  version,
  ...more,
});

function check(writes: Write[], reads: Read[], failedWrites: FailedWrite[] = []) {
  const recorder = new HistoryRecorder();
  for (const one of writes) recorder.write(one);
  for (const one of failedWrites) recorder.failedWrite(one);
  for (const one of reads) recorder.read(one);
  return checkHistory(recorder.history);
}

describe('checkHistory', () => {
  it('finds a read that began after a write was acknowledged and saw an older version, with how far behind it was', () => {
    // Write 3 is in flight, but write 2 was acknowledged before the read began.
    const report = check([write(1, 0, 10), write(2, 20, 30), write(3, 40, 50)], [read(1, 45, 47)]);
    expect(report.stale).toEqual([{ read: read(1, 45, 47), phase: undefined, required: 2, behindVersions: 1, behindMs: 15 }]);
    // The second read missed versions 2 and 3; its time behind counts from the first it missed.
    const later = check([write(1, 0, 10), write(2, 20, 30), write(3, 40, 50)], [read(1, 60, 62)]);
    expect(later.stale).toEqual([expect.objectContaining({ required: 3, behindVersions: 2, behindMs: 30 })]);
    expect(later.paths).toEqual([expect.objectContaining({ path: 'product', reads: 1, stale: 1, worstBehindVersions: 2, worstBehindMs: 30 })]);
  });

  it('counts a read of the seeded value after the first write as stale', () => {
    const report = check([write(1, 0, 10)], [read(0, 11, 12)]);
    expect(report.stale).toEqual([expect.objectContaining({ required: 1, behindVersions: 1, behindMs: 1 })]);
  });

  it('holds a read beside a write only to what was acknowledged before it began, and reports its gap apart', () => {
    // Write 2 is in flight for the whole read, which sees 1: allowed, a gap of one. Write 3 was sent before the last
    // read ended: the seeded value it saw is three behind.
    const report = check([write(1, 0, 10), write(2, 20, 40), write(3, 50, 60)], [read(1, 25, 30), read(2, 25, 30), read(0, 5, 55)]);
    expect(report.stale).toEqual([]);
    expect(report.worstOverlap).toEqual({ read: read(0, 5, 55), gap: 3 });
    expect(report.paths[0]).toMatchObject({ reads: 3, concurrent: 3, worstOverlapGap: 3 });
    // A read between two writes overlaps neither.
    expect(check([write(1, 0, 10), write(2, 20, 40)], [read(1, 12, 18)]).paths[0]).toMatchObject({ concurrent: 0 });
  });

  it('counts a read that began at the very moment of the acknowledgement as beside the write, not after it', () => {
    expect(check([write(1, 0, 10)], [read(0, 10, 12)]).stale).toEqual([]);
  });

  it('accepts a read that sees a newer version than the one required, or the newest in flight', () => {
    const report = check([write(1, 0, 10), write(2, 20, 30), write(3, 40, 50)], [read(3, 35, 45), read(2, 31, 33), read(3, 60, 61)]);
    expect(report.stale).toEqual([]);
    expect(report.impossible).toEqual([]);
  });

  it('reports a read of a version not yet sent when the read ended as impossible', () => {
    const report = check([write(1, 0, 10), write(2, 20, 30)], [read(2, 12, 18), read(7, 40, 41)]);
    expect(report.impossible.map(({ read: { version } }) => version)).toEqual([2, 7]);
  });

  it('sets no bound with a failed write, yet a read may see its version', () => {
    const failed: FailedWrite = { register: 'a', version: 2, invokedAt: 20, endedAt: 30, error: 'HTTP 503' };
    const report = check([write(1, 0, 10)], [read(1, 40, 41), read(2, 42, 43)], [failed]);
    expect(report.stale).toEqual([]);
    expect(report.impossible).toEqual([]);
    expect(report.failedWrites).toBe(1);
  });

  it('keeps registers apart: a write of one sets no bound on the other', () => {
    const report = check([write(5, 0, 10, 'b')], [read(0, 20, 21), read(5, 20, 21, { register: 'b' }), read(4, 22, 23, { register: 'b', path: 'search' })]);
    expect(report.stale).toEqual([expect.objectContaining({ read: expect.objectContaining({ register: 'b', path: 'search' }), behindVersions: 1 })]);
    expect(report.paths.map(({ path, stale }) => [path, stale])).toEqual([
      ['product', 0],
      ['search', 1],
    ]);
  });

  it('orders writes by acknowledgement, whatever order they were recorded in', () => {
    const report = check([write(3, 40, 50), write(1, 0, 10), write(2, 20, 30)], [read(2, 55, 56), read(1, 35, 36)]);
    expect(report.stale.map(({ read: { version }, required }) => [version, required])).toEqual([
      [1, 2],
      [2, 3],
    ]);
  });

  it('attributes reads, failures, writes and stale reads to the phase they began in, and counts reads per replica', () => {
    const recorder = new HistoryRecorder();
    recorder.phase('steady', 0);
    recorder.write(write(1, 0, 10));
    recorder.read(read(1, 11, 12, { replica: 1 }));
    recorder.phase('flushall', 20);
    recorder.read(read(0, 21, 22));
    recorder.failedRead({ path: 'product', replica: 0, startedAt: 23, endedAt: 24, error: 'HTTP 502' });
    const report = checkHistory(recorder.history);
    expect(report.phases).toEqual([
      { phase: 'steady', reads: 1, failed: 0, stale: 0, writes: 1, failedWrites: 0 },
      { phase: 'flushall', reads: 1, failed: 1, stale: 1, writes: 0, failedWrites: 0 },
    ]);
    expect(report.stale[0]!.phase).toBe('flushall');
    expect(report.paths).toEqual([expect.objectContaining({ reads: 2, failed: 1, byReplica: [1, 1] })]);
    expect(report.failures).toEqual([{ error: 'HTTP 502', reads: 1, writes: 0 }]);
    expect(formatConsistencyReport(report)).toMatch(/2 reads \(1 failed\), 1 writes \(0 failed\): 1 stale, 0 impossible/);
  });

  it('finds nothing in an empty history', () => {
    const report = checkHistory(new HistoryRecorder().history);
    expect(report).toMatchObject({ reads: 0, stale: [], impossible: [], worstOverlap: undefined, paths: [], phases: [], failures: [] });
  });
});
