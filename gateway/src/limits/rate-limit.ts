// Rate limits per caller and operation, counted in Redis so every gateway replica shares them; the limit itself may
// depend on the client the request comes from (RATE_LIMIT_MAX_BY_CLIENT).
import { createHash } from 'node:crypto';
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';
import { ErrorCode, type Redis } from '@ordergraph/core';
import { GraphQLError } from 'graphql';
import { createLRUCache } from 'graphql-yoga';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { clientOf, type ClientIdentity } from '../clients/identity.js';
import { verifiedClaims, viewerOf, type OperationReader } from '../execution/operation.js';

export interface RateLimitSettings {
  windowMs: number;
  max: number;
  expensiveMax: number;
  expensiveOperations: string[];
  /** Proxies in front of the gateway whose X-Forwarded-For entries name the client. */
  trustProxyHops: number;
  /** `max` by client name (clientLimits says which apply). */
  maxByClient?: Readonly<Record<string, number>>;
  /** The verified token's claim that binds its holder to a client name (clientLimits). */
  clientClaim?: string | undefined;
}

/**
 * The limit for a request by the client it comes from. A client's name is self-declared (a header, or a document
 * anyone may send), so a limit chosen by it is only trusted to lower the default: claiming to be a restricted client
 * only hurts the claimant. A limit above the default applies when the caller's verified token binds it to that name
 * (`claim`, e.g. a service account's `client_name`); otherwise the default does. The counts stay per caller whatever
 * client it claims, so switching names cannot multiply a caller's allowance: it only picks which ceiling applies.
 */
export function clientLimits(fallback: number, byClient: Readonly<Record<string, number>> = {}, claim?: string) {
  const highest = Math.max(fallback, ...Object.values(byClient));
  return {
    /** What the counter must be able to count to: every limit's ceiling. */
    highest,
    limitFor(client: ClientIdentity, context: unknown, request: Request | undefined): number {
      const limit = Object.hasOwn(byClient, client.name) ? byClient[client.name]! : undefined;
      if (limit === undefined || limit <= fallback) return limit ?? fallback;
      const bound = claim ? verifiedClaims({ viewer: viewerOf(context), request })?.[claim] : undefined;
      return bound === client.name ? limit : fallback;
    },
  };
}

const KEY_PREFIX = 'ordergraph:ratelimit';

/**
 * A fixed window per key. rate-limiter-flexible counts atomically in Redis (one Lua script: SET NX EX, INCRBY, PTTL);
 * while Redis is unreachable each replica counts in its own memory instead of failing every request.
 */
function limiter(redis: Redis | undefined, name: string, points: number, windowMs: number): RateLimiterAbstract {
  const options = { keyPrefix: `${KEY_PREFIX}:${name}`, points, duration: windowMs / 1000 };
  if (!redis) return new RateLimiterMemory(options);
  return new RateLimiterRedis({
    ...options,
    storeClient: redis,
    rejectIfRedisNotReady: true,
    insuranceLimiter: new RateLimiterMemory(options),
  });
}

/** What the plugins need of a limiter: rate-limiter-flexible's `consume`, resolving when allowed, rejecting when not. */
export interface Counter {
  /** `limit`: what this request is judged against, when lower than the limiter's own points. */
  consume(key: string, points?: number, limit?: number): Promise<unknown>;
}

interface Waiter {
  points: number;
  limit: number;
  allow(): void;
  refuse(reason: unknown): void;
}

/**
 * A limiter whose counts for one key, taken in the same turn of the event loop, go to Redis as one increment (one
 * round trip for every request that arrived together, not one each). Each request is then judged where it stands in
 * that increment, in arrival order, exactly as if each had been counted on its own: with `before` points consumed
 * until then, the request ending at `before + its share` is allowed while that is within the limit. (No library does
 * this: rate-limiter-flexible's own batching, BurstyRateLimiter and the in-memory block, change what is counted.)
 */
export function coalescing(limiter: RateLimiterAbstract): Counter {
  const pending = new Map<string, Waiter[]>();
  const flush = (key: string, waiters: Waiter[]) => {
    const total = waiters.reduce((sum, waiter) => sum + waiter.points, 0);
    const judge = (outcome: unknown) => {
      if (!(outcome instanceof RateLimiterRes)) {
        for (const waiter of waiters) waiter.refuse(outcome);
        return;
      }
      let consumed = outcome.consumedPoints - total;
      for (const waiter of waiters) {
        consumed += waiter.points;
        if (consumed <= waiter.limit) waiter.allow();
        else waiter.refuse(new RateLimiterRes(0, outcome.msBeforeNext, consumed, false));
      }
    };
    limiter.consume(key, total).then(judge, judge);
  };
  return {
    consume: (key, points = 1, limit = limiter.points) =>
      new Promise<void>((allow, refuse) => {
        let waiters = pending.get(key);
        if (!waiters) {
          pending.set(key, (waiters = []));
          setImmediate(() => {
            pending.delete(key);
            flush(key, waiters!);
          });
        }
        waiters.push({ points, limit: Math.min(limit, limiter.points), allow, refuse });
      }),
  };
}

interface ServerContext {
  req?: { socket?: { remoteAddress?: string } };
}

/** The user ID of a verified token, else the client's IP address. */
function clientKey(request: Request, context: ServerContext, trustProxyHops: number): string {
  const viewer = viewerOf(context);
  if (viewer) return `user:${viewer.userId}`;
  const forwarded = request.headers.get('x-forwarded-for')?.split(',').map((hop) => hop.trim()) ?? [];
  const ip = trustProxyHops > 0 ? forwarded[Math.max(forwarded.length - trustProxyHops, 0)] : undefined;
  return `ip:${ip ?? context.req?.socket?.remoteAddress ?? 'unknown'}`;
}

/**
 * A client's bucket within a limiter: a hash, so the size of its Redis key does not depend on what the client sent (an
 * X-Forwarded-For entry, an operation name).
 */
const bucketKey = (client: string, bucket: string): string => createHash('sha256').update(`${client}\u0000${bucket}`).digest('base64url');

/** Bucket keys of the clients and operations seen lately: a client sends the same few operations again and again. */
const RECENT_BUCKET_KEYS = 10_000;

function recentBucketKeys(): (client: string, bucket: string) => string {
  const keys = createLRUCache<string>({ max: RECENT_BUCKET_KEYS });
  return (client, bucket) => {
    const name = `${client}\u0000${bucket}`;
    let key = keys.get(name);
    if (key === undefined) keys.set(name, (key = bucketKey(client, bucket)));
    return key;
  };
}

/** The bucket of a client's cost budget: one per client, whatever its operations. */
export const COST_BUCKET = 'cost';

/** The Redis key counting `client` (`user:<ID>` or `ip:<address>`) in `bucket` of a limiter. */
export const rateLimitKey = (limiter: 'standard' | 'expensive' | 'cost', client: string, bucket: string): string =>
  `${KEY_PREFIX}:${limiter}:${bucketKey(client, bucket)}`;

function rateLimited(operation: string, limit: number, windowMs: number, retryAfterMs: number): GraphQLError {
  const retryAfter = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return new GraphQLError(`Rate limit exceeded: at most ${limit} ${operation} requests per ${windowMs} ms; retry in ${retryAfter} s`, {
    extensions: {
      code: ErrorCode.RATE_LIMITED,
      operation,
      limit,
      windowMs,
      retryAfterMs,
      http: { status: 429, headers: { 'Retry-After': String(retryAfter) } },
    },
  });
}

// The bucket is the name of the operation the document will actually execute: parsed from the document (after a
// persisted query is resolved) and selected the way graphql-js selects it, never taken from the request's
// `operationName` field alone. So sending another `operationName`, adding operations to the document, aliasing
// fields or persisting the document under a hash cannot move a GenerateReport into another bucket, and expensive
// names match whatever their case (`generatereport` is still GenerateReport). A document that does not parse, or
// names no operation to run, counts under the standard limit as `anonymous` and goes on to fail validation.
export function useRateLimits(settings: RateLimitSettings, redis: Redis | undefined, readOperation: OperationReader): GatewayPlugin {
  const standardLimits = clientLimits(settings.max, settings.maxByClient, settings.clientClaim);
  const standard = coalescing(limiter(redis, 'standard', standardLimits.highest, settings.windowMs));
  const expensive = coalescing(limiter(redis, 'expensive', settings.expensiveMax, settings.windowMs));
  const expensiveNames = new Map(settings.expensiveOperations.map((name) => [name.toLowerCase(), name]));
  const keyOf = recentBucketKeys();
  return {
    async onParams({ params, request, context }) {
      const name = readOperation(params)?.operation.name?.value ?? 'anonymous';
      const expensiveName = expensiveNames.get(name.toLowerCase());
      const client = clientOf(context);
      const [bucket, counter, limit] = expensiveName
        ? [expensiveName, expensive, settings.expensiveMax]
        : [name, standard, standardLimits.limitFor(client, context, request)];
      try {
        await counter.consume(keyOf(clientKey(request, context as ServerContext, settings.trustProxyHops), bucket), 1, limit);
      } catch (rejection) {
        if (rejection instanceof RateLimiterRes) throw rateLimited(bucket, limit, settings.windowMs, rejection.msBeforeNext);
        throw rejection;
      }
    },
  };
}

export interface CostBudgetSettings {
  /** Estimated cost a caller may spend per window; 0: no budget (unless its client has one). */
  perWindow: number;
  /** `perWindow` by client name (clientLimits says which apply). */
  perWindowByClient?: Readonly<Record<string, number>>;
  clientClaim?: string | undefined;
  windowMs: number;
  trustProxyHops: number;
}

function costBudgetExceeded(perWindow: number, windowMs: number, cost: number, retryAfterMs: number): GraphQLError {
  const retryAfter = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return new GraphQLError(`Cost budget exceeded: at most ${perWindow} of estimated cost per ${windowMs} ms, this operation costs ${cost}; retry in ${retryAfter} s`, {
    extensions: {
      code: ErrorCode.RATE_LIMITED,
      operation: COST_BUCKET,
      limit: perWindow,
      cost,
      windowMs,
      retryAfterMs,
      http: { status: 429, headers: { 'Retry-After': String(retryAfter) } },
    },
  });
}

// A budget of estimated cost per client and window, in the same Redis counters as the limits above (a `cost` limiter
// whose points are cost, not requests), so a client spends one budget across every replica. Each operation consumes
// the cost the complexity limit measured for it (limits/operation-limits.ts), just before it executes: it must run after that limit,
// and an operation the complexity limit refuses costs nothing. A subscription consumes its cost once, when it starts.
export function useCostRateLimit(settings: CostBudgetSettings, redis: Redis | undefined, costOf: (context: object) => number | undefined): GatewayPlugin {
  // No default budget is an unlimited one: every client's own is then below it.
  const budgets = clientLimits(settings.perWindow > 0 ? settings.perWindow : Infinity, settings.perWindowByClient, settings.clientClaim);
  const ceiling = Math.max(settings.perWindow, ...Object.values(settings.perWindowByClient ?? {}));
  const budget = coalescing(limiter(redis, COST_BUCKET, ceiling, settings.windowMs));
  const keyOf = recentBucketKeys();
  const consume = async ({ args, setResultAndStopExecution }: {
    args: { contextValue: unknown };
    setResultAndStopExecution(result: { errors: GraphQLError[] }): void;
  }) => {
    const context = args.contextValue as ServerContext & { request?: Request };
    const cost = costOf(context);
    if (!context.request || cost === undefined || cost <= 0 || !Number.isFinite(cost)) return;
    const client = clientOf(context);
    const perWindow = budgets.limitFor(client, context, context.request);
    if (!Number.isFinite(perWindow)) return;
    try {
      await budget.consume(keyOf(clientKey(context.request, context, settings.trustProxyHops), COST_BUCKET), cost, perWindow);
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      setResultAndStopExecution({ errors: [costBudgetExceeded(perWindow, settings.windowMs, cost, rejection.msBeforeNext)] });
    }
  };
  return { onExecute: consume, onSubscribe: consume };
}
