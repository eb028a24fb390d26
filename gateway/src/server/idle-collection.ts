// Memory that comes back once the gateway falls quiet. V8 collects its old generation when allocation pushes it to a
// limit, and leaves a heap a burst has grown (the requests in flight at each scavenge, promoted, then dropped) at that
// size until allocation resumes: its memory reducer, the part meant to collect once a process is quiet, judged the
// gateway's allocation rate "high" at every check through minutes of rest after a flood (--trace-memory-reducer, Node
// 24). So a flood of refused requests left the gateway's RSS up by a third at rest, garbage it no longer held
// (bench/README.md, Hostile traffic and memory). This collects once the event loop is quiet and the RSS has grown.
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

export interface IdleCollectionSettings {
  /** How often the gateway looks (ms); the event loop must have been quiet for the whole of the last interval. */
  intervalMs: number;
  /** The share of that interval the event loop may have been busy and still count as quiet. */
  quietUtilization: number;
  /** RSS growth since the lowest reading after the last collection that is worth a collection (bytes). */
  growthBytes: number;
}

export const IDLE_COLLECTION: IdleCollectionSettings = { intervalMs: 5_000, quietUtilization: 0.05, growthBytes: 24 * 2 ** 20 };

type Collect = () => void;

/**
 * V8's full, memory-reducing collection (what `--expose-gc`'s `gc()` does with these options), taken without exposing
 * `gc` to every module: the flag is on only while a fresh context is made.
 */
export function fullCollection(): Collect {
  let gc = (globalThis as { gc?: (options?: object) => void }).gc;
  if (!gc) {
    setFlagsFromString('--expose-gc');
    gc = runInNewContext('gc') as (options?: object) => void;
    setFlagsFromString('--no-expose-gc');
  }
  const collect = gc;
  return () => collect({ type: 'major', execution: 'sync', flavor: 'last-resort' });
}

export interface IdleCollector {
  /** Looks once (the timer calls it every intervalMs): collects if the loop was quiet and the RSS grew enough. */
  check(): boolean;
  stop(): void;
}

/**
 * Every `intervalMs`, if the event loop was busy for less than `quietUtilization` of it and the RSS is `growthBytes`
 * above its lowest since the last collection, one full collection. A gateway under load is never quiet, and V8 keeps
 * its own pace there; a quiet one pays one collection (tens of ms, with nobody waiting) per growth.
 */
export function collectWhenIdle(
  settings: IdleCollectionSettings = IDLE_COLLECTION,
  collect: Collect = fullCollection(),
  measure: { rss(): number; utilization(since?: EventLoopUtilization): EventLoopUtilization } = {
    rss: () => process.memoryUsage.rss(),
    utilization: (since) => performance.eventLoopUtilization(since),
  },
): IdleCollector {
  let lowest = measure.rss();
  let since = measure.utilization();
  const check = () => {
    const now = measure.utilization();
    const busy = measure.utilization(since).utilization;
    since = now;
    const rss = measure.rss();
    lowest = Math.min(lowest, rss);
    if (busy >= settings.quietUtilization || rss - lowest < settings.growthBytes) return false;
    collect();
    lowest = measure.rss();
    // The collection's own time is not the next interval's work.
    since = measure.utilization();
    return true;
  };
  const timer = setInterval(check, settings.intervalMs);
  timer.unref();
  return { check, stop: () => clearInterval(timer) };
}
