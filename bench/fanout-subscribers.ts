// A subscriber process of `npm run bench:fanout`, so that the subscribers' CPU is never counted in a gateway's: opens
// the subscribers the command assigns it (each its own connection and token), timestamps every result as it arrives,
// and when the command says which orders were created, checks each subscriber's receipts and reports them.
import { sseClient, token, wsClient, type SubscriptionResult } from '@ordergraph/testkit';
import { addTallies, emptyTally, tallyReceipts, type FromSubscribers, type SubscriberPlan, type ToSubscribers } from './fanout-tally.js';

interface Subscriber {
  /** Order IDs in arrival order, and for each the ms from its createdAt to its arrival here. */
  ids: string[];
  latencies: number[];
  distinct: Set<string>;
  errors: number;
  ended: boolean;
  close(): void;
}

const subscribers: Subscriber[] = [];
let reportedFailure = false;

const send = (message: FromSubscribers) => new Promise<void>((done) => process.send!(message, () => done()));

/** Subscribes one planned subscriber; `secret` signs its ADMIN token as the gateway expects. */
async function open(plan: SubscriberPlan, query: string, secret: string, tokens: Map<string, Promise<string>>): Promise<void> {
  let signed = tokens.get(plan.identity);
  if (!signed) tokens.set(plan.identity, (signed = token('ADMIN', plan.identity, { secret })));
  const client = plan.transport === 'ws' ? wsClient(plan.url, { token: await signed }) : sseClient(plan.url, { token: await signed });
  const subscriber: Subscriber = { ids: [], latencies: [], distinct: new Set(), errors: 0, ended: false, close: () => {} };
  const end = (error?: unknown) => {
    subscriber.ended = true;
    if (error !== undefined && !reportedFailure) {
      reportedFailure = true; // one line, not thousands: the tally counts them all
      console.error(`a ${plan.transport} subscription on ${plan.url} failed: ${error instanceof Error ? error.message : JSON.stringify(error)}`);
    }
  };
  const unsubscribe = client.subscribe(
    { query },
    {
      next(value) {
        const arrived = Date.now();
        const result = value as SubscriptionResult;
        if (result.errors?.length) subscriber.errors++;
        const order = result.data?.['newOrderCreated'] as { id: string; createdAt: string } | undefined;
        if (!order) return;
        subscriber.ids.push(order.id);
        subscriber.latencies.push(arrived - Date.parse(order.createdAt));
        subscriber.distinct.add(order.id);
      },
      error: end,
      complete: () => end(),
    },
  );
  subscriber.close = () => {
    unsubscribe();
    void client.dispose();
  };
  subscribers.push(subscriber);
}

/**
 * Opens subscribers at `perSecond`, in batches of 10 on a fixed schedule: thousands of handshakes at one instant would
 * measure how a gateway survives a stampede (and trip its connection_init timeout), not how it delivers.
 */
async function openAll(plans: SubscriberPlan[], query: string, secret: string, perSecond: number): Promise<void> {
  const tokens = new Map<string, Promise<string>>();
  const BATCH = 10;
  const started = Date.now();
  for (let i = 0; i < plans.length; i += BATCH) {
    await new Promise((done) => setTimeout(done, Math.max(0, started + (i * 1000) / perSecond - Date.now())));
    await Promise.all(plans.slice(i, i + BATCH).map((plan) => open(plan, query, secret, tokens)));
  }
}

function finish(created: string[]): FromSubscribers {
  const expected = new Set(created);
  let tally = emptyTally();
  const latencies: number[] = [];
  for (const subscriber of subscribers) {
    tally = addTallies(tally, tallyReceipts(subscriber.ids, expected, { errors: subscriber.errors, ended: subscriber.ended }));
    // Each created order's first arrival: a duplicate or a foreign event is counted, never timed.
    const seen = new Set<string>();
    subscriber.ids.forEach((id, i) => {
      if (!expected.has(id) || seen.has(id)) return;
      seen.add(id);
      latencies.push(subscriber.latencies[i]!);
    });
  }
  return { type: 'result', tally, latencies };
}

const progress = setInterval(() => {
  let distinct = 0;
  let ended = 0;
  for (const subscriber of subscribers) {
    distinct += subscriber.distinct.size;
    if (subscriber.ended) ended++;
  }
  void send({ type: 'progress', subscribed: subscribers.length, distinct, ended });
}, 500);

process.on('message', (message: ToSubscribers) => {
  if (message.type === 'subscribe') {
    openAll(message.subscribers, message.query, message.secret, message.perSecond).catch((error: unknown) => {
      console.error('opening subscribers failed:', error);
      process.exit(1);
    });
  } else {
    clearInterval(progress);
    void send(finish(message.created)).then(() => {
      for (const subscriber of subscribers) subscriber.close();
      process.exit(0);
    });
  }
});
// The command going away (Ctrl-C, a crash) closes the IPC channel: leave with it.
process.on('disconnect', () => process.exit(0));
