// The collection once the gateway is quiet: only when the event loop was quiet and the RSS grew past the bound since
// the lowest reading after the last one; and the collection itself, which gives back what a burst left.
import type { EventLoopUtilization } from 'node:perf_hooks';
import { afterEach, describe, expect, it } from 'vitest';
import { collectWhenIdle, fullCollection, type IdleCollector } from '../../src/server/idle-collection.js';

const MB = 2 ** 20;
const SETTINGS = { intervalMs: 60_000, quietUtilization: 0.05, growthBytes: 24 * MB };

/** The collectors a test started, stopped after it. */
const collectors: IdleCollector[] = [];
afterEach(() => {
  for (const collector of collectors.splice(0)) collector.stop();
});

/** A process whose RSS and event-loop busyness the test sets; `collect` brings the RSS to `afterCollection`. */
function fakeProcess(rss: number) {
  const state = { rss, busy: 0, afterCollection: rss, collections: 0 };
  const measure = {
    rss: () => state.rss,
    utilization: (since?: EventLoopUtilization): EventLoopUtilization => ({ idle: 0, active: 0, utilization: since ? state.busy : 0 }),
  };
  const collect = () => {
    state.collections++;
    state.rss = state.afterCollection;
  };
  const collector = collectWhenIdle(SETTINGS, collect, measure);
  collectors.push(collector);
  return { state, collector };
}

describe('collectWhenIdle', () => {
  it('collects once the loop is quiet and the RSS has grown past the bound, then measures growth from after it', () => {
    const { state, collector } = fakeProcess(130 * MB);
    state.rss = 150 * MB; // 20 MB: below the bound
    expect(collector.check()).toBe(false);
    state.rss = 160 * MB;
    state.afterCollection = 140 * MB;
    expect(collector.check()).toBe(true);
    expect(state.collections).toBe(1);
    // What the collection could not give back is the new floor: no collection again until it grows anew.
    state.rss = 150 * MB;
    expect(collector.check()).toBe(false);
    state.rss = 165 * MB;
    expect(collector.check()).toBe(true);
    expect(state.collections).toBe(2);
  });

  it('leaves a busy process to V8, however much it has grown', () => {
    const { state, collector } = fakeProcess(130 * MB);
    state.rss = 400 * MB;
    state.busy = 0.3;
    expect(collector.check()).toBe(false);
    state.busy = 0.01;
    expect(collector.check()).toBe(true);
  });

  it('measures growth from the lowest reading, so memory given back on its own raises no collection', () => {
    const { state, collector } = fakeProcess(200 * MB);
    state.rss = 120 * MB;
    expect(collector.check()).toBe(false);
    state.rss = 140 * MB;
    expect(collector.check()).toBe(false);
    state.rss = 150 * MB;
    expect(collector.check()).toBe(true);
  });
});

describe('fullCollection', () => {
  it('frees what nothing holds any more', () => {
    const collect = fullCollection();
    let garbage: unknown[] | null = Array.from({ length: 200 }, (_, i) => new Array(10_000).fill({ i }));
    const held = process.memoryUsage().heapUsed;
    garbage = null;
    collect();
    expect(garbage).toBeNull();
    expect(process.memoryUsage().heapUsed).toBeLessThan(held - 10 * MB);
  });
});
