// Subscription deduplication: subscribers of the same operation, variables and visibility share one upstream stream
// and one execution per event, however many they are.
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';
import { PUSHES_EVENTS, tokenExpiresAt, visibilityOf, type EventReader, type PushingSource } from '@ordergraph/core';
import type { ExecutionArgs, GraphQLSchema } from 'graphql';
import { isAsyncIterable } from '@graphql-tools/utils';
import { printedOnce, viewerOf } from '../execution/operation.js';

/** What the runtime's subscribe returns: a stream of results, or one result (a refusal) when it did not start. */
type Subscribed = AsyncIterable<unknown> | unknown;


/** The context parts the subgraph calls read the caller's credential from (propagateHeaders and the upstream socket). */
interface CallerContext {
  request?: Request;
  headers?: Record<string, string>;
}

/**
 * The credential a shared stream calls subgraphs with: the subscriber's whose token expires last, so that it holds
 * while any subscriber does (each subscriber's own stream still ends when its token expires: subscriptions/tracking.ts).
 */
class SharedCredential {
  private expiresAt: number;
  readonly context: CallerContext & Record<string, unknown>;

  constructor(creator: CallerContext & Record<string, unknown>) {
    const request = creator.request ? new Request(creator.request.url, { headers: creator.request.headers }) : undefined;
    this.context = { ...creator, ...(request ? { request } : {}), ...(creator.headers ? { headers: { ...creator.headers } } : {}) };
    this.expiresAt = this.expiryOf(creator);
  }

  private expiryOf(context: CallerContext) {
    return tokenExpiresAt(context.request?.headers.get('authorization')) ?? Infinity;
  }

  /** Takes the subscriber's credential when it outlives the current one. */
  offer(subscriber: CallerContext): void {
    const expiresAt = this.expiryOf(subscriber);
    const authorization = subscriber.request?.headers.get('authorization');
    if (expiresAt <= this.expiresAt || !authorization) return;
    this.expiresAt = expiresAt;
    this.context.request?.headers.set('authorization', authorization);
    if (this.context.headers) this.context.headers['authorization'] = authorization;
  }
}

/** Events a member holds for a reader that has not started reading, at most. */
const MAX_UNREAD = 1024;

/**
 * One subscriber's stream of a shared stream's events: a queue the pump pushes into and the subscriber's reader
 * (subscriptions/tracking.ts, which bounds what its subscriber leaves unread) takes from, or that pushes each event straight to
 * that reader (PUSHES_EVENTS). Registered with the shared stream at once, not on its first read.
 */
class Member implements AsyncIterableIterator<unknown>, PushingSource<unknown> {
  private readonly queue: unknown[] = [];
  /** The subscriber's tracker (subscriptions/tracking.ts), once it takes the events as they come. */
  private reader: EventReader<unknown> | undefined;
  private waiting: { resolve(result: IteratorResult<unknown>): void; reject(error: unknown): void } | undefined;
  /** How the stream ended, once it has: what is queued is still read first, then the error if any. */
  private ended: { error?: unknown } | undefined;
  private left = false;

  constructor(private readonly leave: (member: Member) => Promise<void>) {}

  [Symbol.asyncIterator]() {
    return this;
  }

  [PUSHES_EVENTS](reader: EventReader<unknown>): void {
    this.reader = reader;
    for (const event of this.queue.splice(0)) reader.push(event);
    if (this.ended) reader.end(this.ended.error);
  }

  push(event: unknown): void {
    if (this.ended) return;
    if (this.reader) {
      this.reader.push(event);
      return;
    }
    const waiting = this.waiting;
    if (waiting) {
      this.waiting = undefined;
      waiting.resolve({ value: event, done: false });
    } else if (this.queue.length < MAX_UNREAD) {
      this.queue.push(event);
    } else {
      // Nobody reads this stream (its tracker, which would bound it, never started): it leaves rather than grow.
      void this.return();
    }
  }

  end(error?: unknown): void {
    if (this.ended) return;
    this.ended = error === undefined ? {} : { error };
    if (this.reader) {
      this.reader.end(error);
      return;
    }
    const waiting = this.waiting;
    if (waiting) {
      this.waiting = undefined;
      this.settle().then(waiting.resolve, waiting.reject);
    }
  }

  next(): Promise<IteratorResult<unknown>> {
    if (this.queue.length > 0) return Promise.resolve({ value: this.queue.shift(), done: false });
    if (this.ended) return this.settle();
    return new Promise((resolve, reject) => (this.waiting = { resolve, reject }));
  }

  async return(): Promise<IteratorResult<unknown>> {
    this.queue.length = 0;
    this.end();
    if (!this.left) {
      this.left = true;
      await this.leave(this);
    }
    return { value: undefined, done: true };
  }

  /** The end, once the queue is empty: the error once, then done. */
  private settle(): Promise<IteratorResult<unknown>> {
    const error = this.ended?.error;
    if (error === undefined) return Promise.resolve({ value: undefined, done: true });
    this.ended = {};
    return Promise.reject(error);
  }
}

/** One upstream stream and the subscribers reading it; it ends upstream when its last subscriber leaves. */
class SharedStream {
  private readonly members = new Set<Member>();
  private source: AsyncIterator<unknown> | undefined;
  private pumping = false;
  /** Set once the stream has ended: a subscriber that joins then ends at once, as it would have with the others. */
  private ended: { error?: unknown } | undefined;
  readonly started: Promise<Subscribed>;

  constructor(
    subscribe: () => Promise<Subscribed>,
    readonly credential: SharedCredential,
    private readonly onClose: () => void,
  ) {
    this.started = subscribe().then((result) => {
      if (isAsyncIterable(result)) this.source = result[Symbol.asyncIterator]();
      else onClose();
      return result;
    });
    this.started.catch(() => onClose());
  }

  private async pump(source: AsyncIterator<unknown>) {
    try {
      for (;;) {
        const next = await source.next();
        if (next.done) break;
        for (const member of this.members) member.push(next.value);
      }
      this.end({});
    } catch (error) {
      this.end({ error });
    }
  }

  private end(how: { error?: unknown }) {
    this.ended ??= how;
    this.onClose();
    for (const member of this.members) member.end(how.error);
  }

  private readonly leave = async (member: Member) => {
    this.members.delete(member);
    if (this.members.size === 0 && !this.ended) {
      // Nobody joins it any more, and its upstream subscription ends.
      this.ended = {};
      this.onClose();
      await this.source?.return?.();
    }
  };

  /** A stream of every event from now on, for one subscriber. */
  join(): AsyncIterableIterator<unknown> {
    const member = new Member(this.leave);
    if (this.ended) member.end(this.ended.error);
    else this.members.add(member);
    if (!this.pumping && this.source) {
      this.pumping = true;
      void this.pump(this.source);
    }
    return member;
  }
}

/**
 * Subscribers whose operation, variables, visibility (policy.ts) and override labels are the same share one stream,
 * and one upstream subscription. Each still passes every plugin on its own (auth, limits, rate limits) and keeps its
 * own deadline, back-pressure and transport; only the execution is shared. Streams of a previous supergraph are never joined.
 */
export function useSubscriptionSharing(overrideLabelsOf: (context: unknown) => ReadonlySet<string> = () => new Set()): GatewayPlugin {
  const streamsBySchema = new WeakMap<GraphQLSchema, Map<string, SharedStream>>();
  const streamsOf = (schema: GraphQLSchema) => {
    let streams = streamsBySchema.get(schema);
    if (!streams) streamsBySchema.set(schema, (streams = new Map()));
    return streams;
  };
  return {
    onSubscribe({ subscribeFn, setSubscribeFn }) {
      setSubscribeFn(async (args: ExecutionArgs) => {
        const context = args.contextValue as CallerContext & Record<string, unknown>;
        // The override labels a subscriber turns on choose the subgraphs its stream is planned on (progressive-override.ts).
        const labels = [...overrideLabelsOf(context)].sort().join(',');
        const key = [printedOnce(args.document), args.operationName ?? '', JSON.stringify(args.variableValues ?? {}), visibilityOf(viewerOf(context)), labels].join('|');
        const streams = streamsOf(args.schema);
        let stream = streams.get(key);
        if (stream) {
          stream.credential.offer(context);
        } else {
          const credential = new SharedCredential(context);
          const created: SharedStream = new SharedStream(
            async () => subscribeFn({ ...args, contextValue: credential.context }),
            credential,
            () => streams.get(key) === created && streams.delete(key),
          );
          streams.set(key, (stream = created));
        }
        const started = await stream.started;
        return isAsyncIterable(started) ? stream.join() : started;
      });
    },
  };
}
