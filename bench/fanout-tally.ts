// The fan-out benchmark's bookkeeping, kept pure so it can be tested: what the command and its subscriber processes
// tell each other, how one subscriber's receipts are checked against the orders created, and latency percentiles.

export type Transport = 'ws' | 'sse';

/** What the subscribers of the subscription benchmarks (fanout.ts, subscription-memory.ts) select. */
export const SELECTIONS = {
  // createdAt is what fanout.ts times each delivery from.
  basic: 'newOrderCreated { id createdAt }',
  // The cross-subgraph selection of docs/realtime.md's example: each event's user and products are fetched from users and the catalog.
  cross: 'newOrderCreated { id createdAt user { name } items { quantity product { name } } }',
} as const;
export type Selection = keyof typeof SELECTIONS;

/** One subscriber the command asks a subscriber process to open. */
export interface SubscriberPlan {
  transport: Transport;
  /** The gateway replica's /graphql URL. */
  url: string;
  /** The local user id its ADMIN token names. */
  identity: string;
}

/** Command -> subscriber process. */
export type ToSubscribers =
  /** `perSecond`: how fast this process opens its subscribers. */
  | { type: 'subscribe'; subscribers: SubscriberPlan[]; query: string; secret: string; perSecond: number }
  /** Every order the run created, by global ID: each subscriber must have received each exactly once. */
  | { type: 'finish'; created: string[] };

/** Subscriber process -> command. */
export type FromSubscribers =
  /** `distinct`: distinct orders received, summed over subscribers; `ended`: streams that ended or failed. */
  | { type: 'progress'; subscribed: number; distinct: number; ended: number }
  | { type: 'result'; tally: Tally; latencies: number[] };

/** A subscription's results, counted against the orders the run created. */
export interface Tally {
  subscribers: number;
  /** Created orders received (the first time). */
  delivered: number;
  /** Created orders never received. */
  lost: number;
  /** Receipts of a created order beyond its first. */
  duplicated: number;
  /** Orders received that the run did not create (a subscriber should not see them). */
  foreign: number;
  /** Results carrying errors (with or without data). */
  errors: number;
  /** Streams that ended (completed or failed) before the run finished. */
  ended: number;
}

export const emptyTally = (): Tally => ({ subscribers: 0, delivered: 0, lost: 0, duplicated: 0, foreign: 0, errors: 0, ended: 0 });

/** One subscriber's receipts, by order ID in arrival order, checked against `created`. */
export function tallyReceipts(received: readonly string[], created: ReadonlySet<string>, extra: { errors: number; ended: boolean }): Tally {
  const seen = new Set<string>();
  const tally = { ...emptyTally(), subscribers: 1, errors: extra.errors, ended: extra.ended ? 1 : 0 };
  for (const id of received) {
    if (!created.has(id)) tally.foreign++;
    else if (seen.has(id)) tally.duplicated++;
    else {
      seen.add(id);
      tally.delivered++;
    }
  }
  tally.lost = created.size - seen.size;
  return tally;
}

export function addTallies(a: Tally, b: Tally): Tally {
  return {
    subscribers: a.subscribers + b.subscribers,
    delivered: a.delivered + b.delivered,
    lost: a.lost + b.lost,
    duplicated: a.duplicated + b.duplicated,
    foreign: a.foreign + b.foreign,
    errors: a.errors + b.errors,
    ended: a.ended + b.ended,
  };
}

export interface LatencySummary {
  count: number;
  p50: number;
  p99: number;
  max: number;
}

/** Nearest-rank percentiles (the smallest value at or above which `p` % of the samples lie); zeros when empty. */
export function summarise(samples: readonly number[]): LatencySummary {
  if (samples.length === 0) return { count: 0, p50: 0, p99: 0, max: 0 };
  const sorted = Float64Array.from(samples).sort();
  const rank = (p: number) => sorted[Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length))) - 1]!;
  return { count: sorted.length, p50: rank(50), p99: rank(99), max: sorted[sorted.length - 1]! };
}
