// A subscriber process of `npm run bench:subscription-memory`, so that the subscribers' memory and CPU are never the
// gateway's: opens the subscribers the command assigns it (each its own connection and ADMIN token) and counts what
// each receives in a bitmap of event numbers (1.25 KB per subscriber for 10,000 events, not a set of IDs), so that it
// can say, at any time and at the end, how many each has received, and which were lost, repeated or foreign.
import { token } from '@ordergraph/testkit';
import type { SubscriberPlan } from './fanout-tally.js';
import { openAtRate, subscribe } from './subscriber-connections.js';

/** Command -> subscriber process. `capacity`: the most events the run will publish (numbered from 0). */
export type ToMemorySubscribers =
  | { type: 'subscribe'; subscribers: SubscriberPlan[]; query: string; secret: string; perSecond: number; capacity: number }
  | { type: 'finish'; published: number };

export interface MemoryTally {
  subscribers: number;
  /** Distinct events received, summed over subscribers. */
  delivered: number;
  /** The fewest distinct events any one subscriber has received. */
  slowest: number;
  duplicated: number;
  /** Results that are not one of the run's events. */
  foreign: number;
  /** Results carrying errors. */
  errors: number;
  /** Streams that ended (completed, failed or were cut) before the run did. */
  ended: number;
}

/** Subscriber process -> command: `lost` only in the final tally (published events a subscriber never received). */
export type FromMemorySubscribers =
  | { type: 'progress'; subscribed: number; tally: MemoryTally }
  | { type: 'result'; tally: MemoryTally & { lost: number } };

/** Event `k` is published as order `bench-<k>` (the command imports only types from here, never this file's code). */
const EVENT_ID = /^Order:bench-(\d+)$/;

interface Subscriber {
  seen: Uint8Array;
  distinct: number;
  duplicated: number;
  foreign: number;
  errors: number;
  ended: boolean;
  close(): void;
}

const subscribers: Subscriber[] = [];

const send = (message: FromMemorySubscribers) => new Promise<void>((done) => process.send!(message, () => done()));

async function open(plan: SubscriberPlan, query: string, secret: string, capacity: number): Promise<void> {
  const signed = await token('ADMIN', plan.identity, { secret });
  const subscriber: Subscriber = { seen: new Uint8Array(Math.ceil(capacity / 8)), distinct: 0, duplicated: 0, foreign: 0, errors: 0, ended: false, close: () => {} };
  subscriber.close = subscribe(
    plan,
    query,
    signed,
    (result) => {
      if (result.errors?.length) subscriber.errors++;
      const id = (result.data?.['newOrderCreated'] as { id?: string } | undefined)?.id;
      if (!id) return;
      const match = EVENT_ID.exec(Buffer.from(id, 'base64url').toString('utf8'));
      const k = match ? Number(match[1]) : -1;
      if (k < 0 || k >= capacity) {
        subscriber.foreign++;
        return;
      }
      const bit = 1 << (k & 7);
      if (subscriber.seen[k >> 3]! & bit) {
        subscriber.duplicated++;
        return;
      }
      subscriber.seen[k >> 3]! |= bit;
      subscriber.distinct++;
    },
    () => (subscriber.ended = true),
  );
  subscribers.push(subscriber);
}

/** Opens the planned subscribers at the command's rate. */
function openAll(message: Extract<ToMemorySubscribers, { type: 'subscribe' }>): Promise<void> {
  return openAtRate(message.subscribers, message.perSecond, (plan) => open(plan, message.query, message.secret, message.capacity));
}

function tally(): MemoryTally {
  const sum: MemoryTally = { subscribers: subscribers.length, delivered: 0, slowest: Infinity, duplicated: 0, foreign: 0, errors: 0, ended: 0 };
  for (const subscriber of subscribers) {
    sum.delivered += subscriber.distinct;
    sum.slowest = Math.min(sum.slowest, subscriber.distinct);
    sum.duplicated += subscriber.duplicated;
    sum.foreign += subscriber.foreign;
    sum.errors += subscriber.errors;
    if (subscriber.ended) sum.ended++;
  }
  if (subscribers.length === 0) sum.slowest = 0;
  return sum;
}

/** Events 0 .. published - 1 that a subscriber never received, summed over subscribers. */
function lost(published: number): number {
  let missing = 0;
  for (const subscriber of subscribers) {
    for (let k = 0; k < published; k++) if (!(subscriber.seen[k >> 3]! & (1 << (k & 7)))) missing++;
  }
  return missing;
}

const progress = setInterval(() => void send({ type: 'progress', subscribed: subscribers.length, tally: tally() }), 250);

process.on('message', (message: ToMemorySubscribers) => {
  if (message.type === 'subscribe') {
    openAll(message).catch((error: unknown) => {
      console.error('opening subscribers failed:', error);
      process.exit(1);
    });
  } else {
    clearInterval(progress);
    void send({ type: 'result', tally: { ...tally(), lost: lost(message.published) } }).then(() => {
      for (const subscriber of subscribers) subscriber.close();
      process.exit(0);
    });
  }
});
// The command going away (Ctrl-C, a crash) closes the IPC channel: leave with it.
process.on('disconnect', () => process.exit(0));
