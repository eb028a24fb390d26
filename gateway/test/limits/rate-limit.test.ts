// Counts taken together for one key go to the limiter as one increment, and each request is judged as if counted alone.
import { describe, expect, it } from 'vitest';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { clientLimits, coalescing } from '../../src/limits/rate-limit.js';

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

describe('limits by client', () => {
  const web = { name: 'web', version: '1', source: 'header' } as const;
  const importer = { name: 'importer', version: '1', source: 'header' } as const;
  const unknown = { name: 'unknown', version: 'unknown', source: 'none' } as const;
  /** A context as authentication leaves it, with a token whose payload carries `claims` (verified upstream of this). */
  const signedIn = (claims: Record<string, unknown>) => {
    const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
    return {
      context: { viewer: { userId: 'user-0001', role: 'USER' } },
      request: new Request('http://gateway/graphql', { headers: { authorization: `Bearer e30.${payload}.signature` } }),
    };
  };

  it('lowers the limit for whoever claims a restricted client, and raises it only for a caller whose token binds the name', () => {
    const limits = clientLimits(100, { importer: 10, web: 500 }, 'client_name');
    expect(limits.highest).toBe(500);
    expect(limits.limitFor(importer, {}, undefined)).toBe(10);
    expect(limits.limitFor(unknown, {}, undefined)).toBe(100);
    // Anyone can say "web": the header alone keeps the default.
    expect(limits.limitFor(web, {}, undefined)).toBe(100);
    const bound = signedIn({ client_name: 'web' });
    expect(limits.limitFor(web, bound.context, bound.request)).toBe(500);
    const other = signedIn({ client_name: 'importer' });
    expect(limits.limitFor(web, other.context, other.request)).toBe(100);
    // The same token, anonymous: claims are read only from a verified viewer.
    expect(limits.limitFor(web, {}, bound.request)).toBe(100);
    // Without a claim setting nothing binds: only lower limits apply.
    expect(clientLimits(100, { web: 500 }).limitFor(web, bound.context, bound.request)).toBe(100);
  });

  it('judges each request of one increment against its own limit, the counts shared', async () => {
    const limiter = new CountingLimiter({ points: 10, duration: 60 });
    const counter = coalescing(limiter);
    // One caller: two requests as a client limited to 2, then one under the default of 10.
    const first = await outcomes([counter.consume('caller', 1, 2), counter.consume('caller', 1, 2), counter.consume('caller', 1, 2), counter.consume('caller', 1, 10)]);
    expect(first.map((result) => (result === 'allowed' ? result : 'refused'))).toEqual(['allowed', 'allowed', 'refused', 'allowed']);
    expect(limiter.calls).toBe(1);
    // A limit above the limiter's own points is capped by them.
    const capped = coalescing(new RateLimiterMemory({ points: 1, duration: 60 }));
    expect(await outcomes([capped.consume('caller', 1, 5), capped.consume('caller', 1, 5)]).then((results) => results.map((result) => result === 'allowed'))).toEqual([true, false]);
  });
});
