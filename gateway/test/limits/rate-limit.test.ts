// Counts taken together for one key go to the limiter as one increment, and each request is judged as if counted alone.
import { describe, expect, it } from 'vitest';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { coalescing } from '../../src/limits/rate-limit.js';

/** rate-limiter-flexible's in-memory limiter (the one the gateway runs without Redis), counting the calls it gets. */
class CountingLimiter extends RateLimiterMemory {
  calls = 0;
  override consume(key: string | number, points?: number, options?: object): Promise<RateLimiterRes> {
    this.calls++;
    return super.consume(key, points, options);
  }
}

const outcomes = (consumptions: Promise<unknown>[]) =>
  Promise.all(consumptions.map((consumed) => consumed.then(() => 'allowed' as const, (reason: unknown) => reason)));

describe('coalescing rate-limit counts', () => {
  it('allows the first requests up to the limit, in arrival order, with one increment for all of them', async () => {
    const limiter = new CountingLimiter({ points: 5, duration: 60 });
    const counter = coalescing(limiter);
    const results = await outcomes(Array.from({ length: 8 }, () => counter.consume('client')));
    expect(results.slice(0, 5)).toEqual(Array(5).fill('allowed'));
    for (const refusal of results.slice(5)) {
      expect(refusal).toBeInstanceOf(RateLimiterRes);
      expect((refusal as RateLimiterRes).msBeforeNext).toBeGreaterThan(0);
    }
    expect(limiter.calls).toBe(1);
    // The next turn counts on from there: the window is spent.
    await expect(counter.consume('client')).rejects.toBeInstanceOf(RateLimiterRes);
    expect(limiter.calls).toBe(2);
  });

  it('judges weighted requests (a cost budget) by where each ends, and keeps keys apart', async () => {
    const limiter = new CountingLimiter({ points: 7, duration: 60 });
    const counter = coalescing(limiter);
    const results = await outcomes([counter.consume('a', 3), counter.consume('b', 7), counter.consume('a', 3), counter.consume('a', 3), counter.consume('a', 1)]);
    // a: 3 and 6 are within 7, 9 is not, and the last ends at 10 (a refused request is counted, as on its own).
    expect(results.map((result) => (result === 'allowed' ? result : (result as RateLimiterRes).consumedPoints))).toEqual(['allowed', 'allowed', 'allowed', 9, 10]);
    expect(limiter.calls).toBe(2);
  });

  it('hands a failure of the store to every request that was waiting on it', async () => {
    const failure = new Error('store unreachable');
    const failing = new (class extends RateLimiterMemory {
      override consume(): Promise<RateLimiterRes> {
        return Promise.reject(failure);
      }
    })({ points: 5, duration: 60 });
    const counter = coalescing(failing);
    expect(await outcomes([counter.consume('client'), counter.consume('client')])).toEqual([failure, failure]);
  });
});
