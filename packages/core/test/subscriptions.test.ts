import { Repeater } from '@repeaterjs/repeater';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { PUSHES_EVENTS, subscriptionMetrics, trackSubscription, websocketAuthorization, type EventReader, type PushingSource } from '../src/subscriptions.js';

/** A source that yields what is pushed into it and records whether it was released. */
function source<T>() {
  let push: (value: T) => void = () => {};
  let fail: (error: unknown) => void = () => {};
  const state = { released: false };
  const iterable = new Repeater<T>((next, stop) => {
    push = (value) => void next(value);
    fail = (error) => stop(error);
    void stop.then(() => (state.released = true));
  });
  return { iterable, push: (value: T) => push(value), fail: (error: unknown) => fail(error), state };
}

async function gaugeValue(registry: Registry): Promise<number> {
  const metric = await registry.getSingleMetric('graphql_active_subscriptions')!.get();
  return metric.values[0]?.value ?? 0;
}

describe('trackSubscription', () => {
  it('counts a stream while it is read and releases its source when the consumer leaves, even while it waits', async () => {
    const registry = new Registry();
    const gauge = subscriptionMetrics(registry);
    const upstream = source<number>();
    const tracked = trackSubscription(upstream.iterable, gauge);

    const first = tracked.next();
    upstream.push(1);
    expect(await first).toEqual({ value: 1, done: false });
    expect(await gaugeValue(registry)).toBe(1);

    // Waiting for an event that never comes: returning must not wait for it.
    const pending = tracked.next();
    await tracked.return!(undefined);
    expect(await pending).toEqual({ value: undefined, done: true });
    expect(upstream.state.released).toBe(true);
    expect(await gaugeValue(registry)).toBe(0);
  });

  it('ends with the mapped error when the source fails, and runs onEnd', async () => {
    const registry = new Registry();
    const upstream = source<number>();
    const ended: string[] = [];
    const tracked = trackSubscription(upstream.iterable, subscriptionMetrics(registry), {
      onEnd: () => ended.push('ended'),
      mapError: (error) => new Error(`mapped: ${(error as Error).message}`),
    });
    const next = tracked.next();
    upstream.fail(new Error('connect ECONNREFUSED 10.0.0.7:4002'));
    await expect(next).rejects.toThrow('mapped: connect ECONNREFUSED 10.0.0.7:4002');
    expect(ended).toEqual(['ended']);
    expect(await gaugeValue(registry)).toBe(0);
  });
});

describe('trackSubscription with a deadline', () => {
  it('ends at the deadline with its last value, releasing the source', async () => {
    const registry = new Registry();
    const upstream = source<number>();
    const tracked = trackSubscription(upstream.iterable, subscriptionMetrics(registry), { deadline: { at: Date.now() - 1, last: -1 } });
    expect(await tracked.next()).toEqual({ value: -1, done: false });
    expect(await tracked.next()).toEqual({ value: undefined, done: true });
    expect(upstream.state.released).toBe(true);
    expect(await gaugeValue(registry)).toBe(0);
  });

  it('watches no deadline further away than a timer can wait (about 24 days)', async () => {
    const upstream = source<number>();
    const tracked = trackSubscription(upstream.iterable, subscriptionMetrics(new Registry()), {
      deadline: { at: Date.now() + 30 * 24 * 60 * 60 * 1000, last: -1 },
    });
    const next = tracked.next();
    upstream.push(1);
    expect(await next).toEqual({ value: 1, done: false });
    await tracked.return!(undefined);
  });
});

describe('websocketAuthorization', () => {
  it('takes Authorization from the connection_init payload first, then the handshake header', () => {
    expect(websocketAuthorization({ Authorization: 'Bearer a' }, 'Bearer b')).toBe('Bearer a');
    expect(websocketAuthorization({ authorization: 'Bearer a' }, undefined)).toBe('Bearer a');
    expect(websocketAuthorization({}, 'Bearer b')).toBe('Bearer b');
    expect(websocketAuthorization(undefined, undefined)).toBeUndefined();
  });
});

describe('trackSubscription with an overflow bound', () => {
  it('keeps up to maxPending unread events, then fails, cuts the transport and releases its source', async () => {
    const registry = new Registry();
    const upstream = source<number>();
    const cut: string[] = [];
    const tracked = trackSubscription(upstream.iterable, subscriptionMetrics(registry), {
      overflow: { maxPending: 3, error: new Error('too slow'), onOverflow: () => cut.push('cut') },
    });
    // An event counts as pending until the consumer asks for the next one (the transport has sent it).
    const first = tracked.next(); // starts reading; the consumer then stops taking events
    for (let value = 1; value <= 3; value++) upstream.push(value);
    expect(await first).toEqual({ value: 1, done: false });
    await new Promise((resolve) => setImmediate(resolve));
    expect(cut).toEqual([]); // three events pending: the bound, not beyond it
    upstream.push(4);
    await new Promise((resolve) => setImmediate(resolve));
    expect(cut).toEqual(['cut']);
    expect(upstream.state.released).toBe(true);
    expect(await gaugeValue(registry)).toBe(0);
    // What was read before still reaches the consumer, then the error.
    expect([await tracked.next(), await tracked.next()].map((result) => result.value)).toEqual([2, 3]);
    await expect(tracked.next()).rejects.toThrow('too slow');
  });

  it('never cuts a consumer that keeps up', async () => {
    const upstream = source<number>();
    const cut: string[] = [];
    const tracked = trackSubscription(upstream.iterable, subscriptionMetrics(new Registry()), {
      overflow: { maxPending: 1, error: new Error('too slow'), onOverflow: () => cut.push('cut') },
    });
    for (let value = 1; value <= 50; value++) {
      const next = tracked.next();
      upstream.push(value);
      expect(await next).toEqual({ value, done: false });
    }
    expect(cut).toEqual([]);
  });
});

describe('trackSubscription of a source that pushes its events', () => {
  /** A source that hands events to its reader once one attaches (as subscriptions/sharing.ts's streams do). */
  function pushing<T>() {
    let reader: EventReader<T> | undefined;
    const state = { released: false, read: false };
    const iterable: PushingSource<T> = {
      [PUSHES_EVENTS]: (attached) => void (reader = attached),
      [Symbol.asyncIterator]: () => ({
        next: () => {
          state.read = true;
          return new Promise<IteratorResult<T>>(() => {});
        },
        return: async () => {
          state.released = true;
          return { value: undefined, done: true };
        },
      }),
    };
    return { iterable, state, push: (value: T) => reader!.push(value), end: (error?: unknown) => reader!.end(error) };
  }

  it('takes pushed events without reading, bounds them as it would read ones, and releases the source', async () => {
    const registry = new Registry();
    const upstream = pushing<number>();
    const cut: string[] = [];
    const tracked = trackSubscription(upstream.iterable, subscriptionMetrics(registry), {
      overflow: { maxPending: 2, error: new Error('too slow'), onOverflow: () => cut.push('cut') },
    });
    const first = tracked.next();
    upstream.push(1);
    expect(await first).toEqual({ value: 1, done: false });
    const second = tracked.next();
    upstream.push(2);
    upstream.push(3);
    expect(await second).toEqual({ value: 2, done: false });
    upstream.push(4); // 2 and 3 unread: one too many
    expect(cut).toEqual(['cut']);
    await new Promise((resolve) => setImmediate(resolve));
    expect(upstream.state).toEqual({ released: true, read: false });
    expect(await gaugeValue(registry)).toBe(0);
    expect((await tracked.next()).value).toBe(3);
    await expect(tracked.next()).rejects.toThrow('too slow');
  });

  it('completes when the source ends, and fails with the mapped error when it fails', async () => {
    const done = pushing<number>();
    const completed = trackSubscription(done.iterable, subscriptionMetrics(new Registry()), {
      overflow: { maxPending: 10, error: new Error('too slow'), onOverflow: () => {} },
    });
    const next = completed.next();
    done.push(1);
    done.end();
    expect(await next).toEqual({ value: 1, done: false });
    expect(await completed.next()).toEqual({ value: undefined, done: true });

    const failing = pushing<number>();
    const failed = trackSubscription(failing.iterable, subscriptionMetrics(new Registry()), {
      overflow: { maxPending: 10, error: new Error('too slow'), onOverflow: () => {} },
      mapError: (error) => new Error(`mapped: ${(error as Error).message}`),
    });
    const pending = failed.next();
    failing.end(new Error('upstream gone'));
    await expect(pending).rejects.toThrow('mapped: upstream gone');
  });
});
