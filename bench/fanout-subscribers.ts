// A subscriber process of `npm run bench:fanout`, so that the subscribers' CPU is never counted in a gateway's: opens
// the subscribers the command assigns it (each its own connection and token), timestamps every result as it arrives,
// and when the command says which orders were created, checks each subscriber's receipts and reports them.
import { token } from '@ordergraph/testkit';
import { addTallies, emptyTally, tallyReceipts, type FromSubscribers, type SubscriberPlan, type ToSubscribers } from './fanout-tally.js';
import { openAtRate, subscribe } from './subscriber-connections.js';

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

const send = (message: FromSubscribers) => new Promise<void>((done) => process.send!(message, () => done()));

/** Subscribes one planned subscriber; `secret` signs its ADMIN token as the gateway expects. */
async function open(plan: SubscriberPlan, query: string, secret: string, tokens: Map<string, Promise<string>>): Promise<void> {
  let signed = tokens.get(plan.identity);
  if (!signed) tokens.set(plan.identity, (signed = token('ADMIN', plan.identity, { secret })));
  const subscriber: Subscriber = { ids: [], latencies: [], distinct: new Set(), errors: 0, ended: false, close: () => {} };
  subscriber.close = subscribe(
    plan,
    query,
    await signed,
    (result) => {
      const arrived = Date.now();
      if (result.errors?.length) subscriber.errors++;
      const order = result.data?.['newOrderCreated'] as { id: string; createdAt: string } | undefined;
      if (!order) return;
      subscriber.ids.push(order.id);
      subscriber.latencies.push(arrived - Date.parse(order.createdAt));
      subscriber.distinct.add(order.id);
    },
    () => (subscriber.ended = true),
  );
  subscribers.push(subscriber);
}

/** Opens the planned subscribers (their tokens signed once per identity) at `perSecond`. */
function openAll(plans: SubscriberPlan[], query: string, secret: string, perSecond: number): Promise<void> {
  const tokens = new Map<string, Promise<string>>();
  return openAtRate(plans, perSecond, (plan) => open(plan, query, secret, tokens));
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
