// The fan-out benchmark's accounting (bench/fanout-tally.ts): every created order exactly once, nothing else.
import { describe, expect, it } from 'vitest';
import { addTallies, summarise, tallyReceipts } from '../bench/fanout-tally.js';

describe('fan-out accounting', () => {
  const created = new Set(['a', 'b', 'c']);

  it('counts every created order received once as delivered, and nothing else', () => {
    expect(tallyReceipts(['c', 'a', 'b'], created, { errors: 0, ended: false })).toEqual({
      subscribers: 1, delivered: 3, lost: 0, duplicated: 0, foreign: 0, errors: 0, ended: 0,
    });
  });

  it('tells lost, duplicated and foreign receipts apart', () => {
    expect(tallyReceipts(['a', 'a', 'x', 'a', 'c'], created, { errors: 2, ended: true })).toEqual({
      subscribers: 1, delivered: 2, lost: 1, duplicated: 2, foreign: 1, errors: 2, ended: 1,
    });
  });

  it('adds tallies field by field', () => {
    const one = tallyReceipts(['a'], created, { errors: 0, ended: false });
    const two = tallyReceipts(['a', 'b', 'b'], created, { errors: 1, ended: true });
    expect(addTallies(one, two)).toEqual({ subscribers: 2, delivered: 3, lost: 3, duplicated: 1, foreign: 0, errors: 1, ended: 1 });
  });

  it('takes nearest-rank percentiles, numerically sorted', () => {
    const samples = Array.from({ length: 100 }, (_, i) => 100 - i); // 100 .. 1, unsorted
    expect(summarise(samples)).toEqual({ count: 100, p50: 50, p99: 99, max: 100 });
    expect(summarise([7, 30, 200])).toEqual({ count: 3, p50: 30, p99: 200, max: 200 });
    expect(summarise([])).toEqual({ count: 0, p50: 0, p99: 0, max: 0 });
  });
});
