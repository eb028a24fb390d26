// What the subscriber processes of both subscription benchmarks (fanout-subscribers.ts, subscription-memory-
// subscribers.ts) do alike: open each planned subscriber on its own connection, at a set rate, and hand its results
// and its end to the process's own bookkeeping.
import { sseClient, wsClient, type SubscriptionResult } from '@ordergraph/testkit';
import type { SubscriberPlan } from './fanout-tally.js';

let reportedFailure = false;

/**
 * Subscribes one planned subscriber with its signed token: `onResult` gets each result as it arrives, `onEnd` the
 * stream's end (completed, failed or cut). Returns what closes it.
 */
export function subscribe(plan: SubscriberPlan, query: string, signed: string, onResult: (result: SubscriptionResult) => void, onEnd: () => void): () => void {
  const client = plan.transport === 'ws' ? wsClient(plan.url, { token: signed }) : sseClient(plan.url, { token: signed });
  const end = (error?: unknown) => {
    onEnd();
    if (error !== undefined && !reportedFailure) {
      reportedFailure = true; // one line, not thousands: the tallies count them all
      console.error(`a ${plan.transport} subscription on ${plan.url} failed: ${error instanceof Error ? error.message : JSON.stringify(error)}`);
    }
  };
  const unsubscribe = client.subscribe({ query }, { next: (value) => onResult(value as SubscriptionResult), error: end, complete: () => end() });
  return () => {
    unsubscribe();
    void client.dispose();
  };
}

/**
 * Opens `plans` at `perSecond`, in batches of 10 on a fixed schedule: thousands of handshakes at one instant would
 * measure how a gateway survives a stampede (and trip its connection_init timeout), not how it delivers.
 */
export async function openAtRate(plans: SubscriberPlan[], perSecond: number, open: (plan: SubscriberPlan) => Promise<void>): Promise<void> {
  const BATCH = 10;
  const started = Date.now();
  for (let i = 0; i < plans.length; i += BATCH) {
    await new Promise((done) => setTimeout(done, Math.max(0, started + (i * 1000) / perSecond - Date.now())));
    await Promise.all(plans.slice(i, i + BATCH).map(open));
  }
}
