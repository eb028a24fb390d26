// Subscription deduplication: subscribers of the same operation, variables and visibility share one upstream stream
// and one execution per event, however many they are.
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';
import { tokenExpiresAt, visibilityOf } from '@ordergraph/core';
import { Repeater } from '@repeaterjs/repeater';
import { print, type DocumentNode, type ExecutionArgs, type GraphQLSchema } from 'graphql';
import { viewerOf } from './operation.js';

/** What the runtime's subscribe returns: a stream of results, or one result (a refusal) when it did not start. */
type Subscribed = AsyncIterable<unknown> | unknown;

const isStream = (value: unknown): value is AsyncIterable<unknown> => typeof value === 'object' && value !== null && Symbol.asyncIterator in value;

/** The context parts the subgraph calls read the caller's credential from (propagateHeaders and the upstream socket). */
interface CallerContext {
  request?: Request;
  headers?: Record<string, string>;
}

/**
 * The credential a shared stream calls subgraphs with: the subscriber's whose token expires last, so that it holds
 * while any subscriber does (each subscriber's own stream still ends when its token expires: subscriptions.ts).
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

interface Subscriber {
  push(event: unknown): void;
  end(error?: unknown): void;
}

/** One upstream stream and the subscribers reading it; it ends upstream when its last subscriber leaves. */
class SharedStream {
  private readonly subscribers = new Set<Subscriber>();
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
      if (isStream(result)) this.source = result[Symbol.asyncIterator]();
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
        for (const subscriber of this.subscribers) subscriber.push(next.value);
      }
      this.end({});
    } catch (error) {
      this.end({ error });
    }
  }

  private end(how: { error?: unknown }) {
    this.ended ??= how;
    this.onClose();
    for (const subscriber of this.subscribers) subscriber.end(how.error);
  }

  /** A stream of every event from now on, for one subscriber; registered at once, not on its first read. */
  join(): AsyncIterableIterator<unknown> {
    const queued: unknown[] = [];
    let endedBeforeRead: { error?: unknown } | undefined = this.ended;
    let attached: Subscriber | undefined;
    const subscriber: Subscriber = {
      push: (event) => (attached ? attached.push(event) : queued.push(event)),
      end: (error) => (attached ? attached.end(error) : (endedBeforeRead = { error })),
    };
    if (!this.ended) this.subscribers.add(subscriber);
    if (!this.pumping && this.source) {
      this.pumping = true;
      void this.pump(this.source);
    }
    return new Repeater<unknown>(async (push, stop) => {
      attached = {
        // The reader (subscriptions.ts) takes events as they come and bounds what its subscriber leaves unread.
        push: (event) => void push(event).catch(() => undefined),
        end: (error) => stop(error),
      };
      for (const event of queued.splice(0)) attached.push(event);
      if (endedBeforeRead) attached.end(endedBeforeRead.error);
      await stop;
      this.subscribers.delete(subscriber);
      if (this.subscribers.size === 0 && !this.ended) {
        // Nobody joins it any more, and its upstream subscription ends.
        this.ended = {};
        this.onClose();
        await this.source?.return?.();
      }
    });
  }
}

/** Each distinct document printed once (the parse cache hands out one object per text). */
const printed = new WeakMap<DocumentNode, string>();
const printedOnce = (document: DocumentNode) => {
  let text = printed.get(document);
  if (text === undefined) printed.set(document, (text = print(document)));
  return text;
};

/**
 * Subscribers whose operation, variables and visibility (policy.ts) are the same share one stream, and one upstream
 * subscription. Each still passes every plugin on its own (auth, limits, rate limits) and keeps its own deadline,
 * back-pressure and transport; only the execution is shared. Streams of a previous supergraph are never joined.
 */
export function useSubscriptionSharing(): GatewayPlugin {
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
        const key = [printedOnce(args.document), args.operationName ?? '', JSON.stringify(args.variableValues ?? {}), visibilityOf(viewerOf(context))].join('|');
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
        return isStream(started) ? stream.join() : started;
      });
    },
  };
}
