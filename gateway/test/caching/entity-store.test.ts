// The entity cache's Redis store as two replicas use it, against a private redis-server: the generations a request's
// lookups read once it has read the stream of changes, what another replica's write or purge changed read anew by the
// next request, a mirror that starts anew when the stream no longer holds where it had read to, and changes in the
// stream that it did not write.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createLogger, createRedis, type Redis } from '@ordergraph/core';
import { startRedis, type TestRedis } from '@ordergraph/testkit';
import { ChangesSeen, memoryEntityStore, redisEntityStore, type Dependencies, type EntityStore, type Stamps } from '../../src/caching/entity-store.js';

const logger = createLogger('entity-store-test', 'silent');
const bounds = { entries: 100, bytes: 100_000 };
const shared = ['p:Product', 't:Review'];
const dependencies: Dependencies[] = [
  { shared, own: 'e:Product:1' },
  { shared, own: 'e:Product:2' },
];
/** Each entry's whole stamp as one text. */
const joined = (stamps: Stamps | undefined) => stamps?.shared.map((part, n) => `${part}|${stamps.own[n] ?? ''}`);

let server: TestRedis;
let connections: Redis[] = [];
let admin: Redis;
let one: EntityStore;
let other: EntityStore;

/** Calls of each command since the last RESETSTAT. */
async function commands(): Promise<Record<string, number>> {
  const stats = await admin.info('commandstats');
  return Object.fromEntries([...stats.matchAll(/^cmdstat_(\w+):calls=(\d+)/gm)].map(([, name, calls]) => [name!, Number(calls)]));
}

/** The stamps a new request (a context of its own) reads, until Redis has an epoch (the first read sets it). */
async function stampsOfNewRequest(store: EntityStore): Promise<Stamps> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const stamps = await store.stamps(dependencies, {});
    if (stamps) return stamps;
  }
  throw new Error('no stamps');
}

beforeAll(async () => {
  server = await startRedis();
  admin = createRedis(server.url, logger);
});
beforeEach(async () => {
  await admin.flushall();
  connections = [createRedis(server.url, logger), createRedis(server.url, logger)];
  // Connected (ready) before the stores are used: one that is not serves nothing.
  await Promise.all(connections.map((connection) => connection.ping()));
  one = redisEntityStore(connections[0]!, bounds, 60_000, logger);
  other = redisEntityStore(connections[1]!, bounds, 60_000, logger);
});
afterEach(() => {
  for (const connection of connections) connection.disconnect();
});
afterAll(async () => {
  admin?.disconnect();
  await server?.close();
});

describe('the Redis entity store', () => {
  it("reads the generations once, then only the stream once per request; another replica's write is read anew by the next request", async () => {
    const first = await stampsOfNewRequest(one);
    await admin.config('RESETSTAT');
    const request = {};
    const again = await one.stamps(dependencies, request);
    expect(joined(again)).toEqual(joined(first));
    // The same request's later lookups read nothing more.
    await one.stamps(dependencies, request);
    const counts = await commands();
    expect(counts).toMatchObject({ xrange: 1 });
    expect(counts['mget']).toBeUndefined();

    await other.bump(['e:Product:1']);
    const after = await one.stamps(dependencies, {});
    expect(joined(after)![0]).not.toBe(joined(first)![0]);
    expect(joined(after)![1]).toBe(joined(first)![1]);
    // Only the generation the write set was read again.
    expect(await commands()).toMatchObject({ xrange: 2, mget: 1 });
    // A request that began before the write reads no older generations than those it began with: here the new one.
    expect(joined(await one.stamps(dependencies, request))).toEqual(joined(after));

    // A generation every entry shares, then a purge (a new epoch): each changes every stamp on the other replica.
    await other.bump(['t:Review']);
    const shared = await one.stamps(dependencies, {});
    expect(joined(shared)!.map((stamp, n) => stamp === joined(after)![n])).toEqual([false, false]);
    await other.purgeAll();
    const purged = await stampsOfNewRequest(one);
    expect(joined(purged)!.map((stamp, n) => stamp === joined(shared)![n])).toEqual([false, false]);
  });

  it('starts its mirror anew when the stream no longer holds where it read to: changes lost to trimming are never missed', async () => {
    const first = await stampsOfNewRequest(one);
    // A write whose change the stream lost (as trimming or expiry would lose it), then one it holds.
    await admin.del('ordergraph:entity:changes');
    await admin.set('ordergraph:entity:gen:e:Product:2', 'set-while-unseen', 'PX', 60_000);
    await other.bump(['e:Product:1']);
    const after = await one.stamps(dependencies, {});
    expect(joined(after)![0]).not.toBe(joined(first)![0]);
    expect(after!.own[1]).toBe('set-while-unseen');
  });

  it('vouches for nothing once Redis was emptied: a new epoch, read all anew', async () => {
    const first = await stampsOfNewRequest(one);
    await admin.flushall();
    // The first request after it may find no epoch (nothing vouched for) or the new one its read of the stream set.
    const after = (await one.stamps(dependencies, {})) ?? (await stampsOfNewRequest(one));
    expect(after.shared[0]!.split('|')[0]).not.toBe(first.shared[0]!.split('|')[0]);
  });

  it('survives changes it did not write: a malformed one makes it vouch for nothing, then start anew with a new epoch', async () => {
    const first = await stampsOfNewRequest(one);
    for (const foreign of [['g', 'not json'], ['g', '{"an":"object"}'], ['other', 'field']]) {
      // Something else appends to the stream (an older or foreign writer, a hand in redis-cli).
      await admin.xadd('ordergraph:entity:changes', '*', ...foreign);
      expect(await one.stamps(dependencies, {})).toBeUndefined();
      const after = await stampsOfNewRequest(one);
      expect(after.shared[0]!.split('|')[0]).not.toBe(first.shared[0]!.split('|')[0]);
    }
    // And a write after it is still read anew.
    const before = await stampsOfNewRequest(one);
    await other.bump(['e:Product:2']);
    expect((await one.stamps(dependencies, {}))!.own[1]).not.toBe(before.own[1]);
  });

  it('stays true past its bound on generations', async () => {
    const small = redisEntityStore(connections[0]!, { entries: 3, bytes: 100_000 }, 60_000, logger);
    const many: Dependencies[] = Array.from({ length: 10 }, (_, n) => ({ shared, own: `e:Product:${n}` }));
    const before = (await small.stamps(many, {})) ?? (await small.stamps(many, {}))!;
    await other.bump(['e:Product:7']);
    const after = (await small.stamps(many, {}))!;
    expect(after.own.map((own, n) => own === before.own[n])).toEqual(many.map((_, n) => n !== 7));
    expect(joined(await small.stamps(many, {}))).toEqual(joined(after));
  });
});

/** A mark of a new request (a context of its own), until the store vouches for one (the first read sets the epoch). */
async function markOfNewRequest(store: EntityStore): Promise<string> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const mark = await store.mark({});
    if (mark !== undefined) return mark;
  }
  throw new Error('no mark');
}

// The response cache keeps each response with the mark its request took before it executed, and serves it only while
// no change of what it depends on has been read since (response-cache.ts).
describe('marks: what changed since a request began', () => {
  it("refuses a fill marked before another replica's write to every request that begins after it, though stored after it", async () => {
    await markOfNewRequest(other);
    const fill = await markOfNewRequest(one);
    await other.bump(['e:Product:1']);
    // The next request, on either replica (both reading the changes since before the fill), has read the write.
    for (const store of [one, other]) {
      await store.mark({});
      expect(store.unchangedSince(['p:Product', 'e:Product:1'], fill)).toBe(false);
      expect(store.unchangedSince(['p:Product', 'e:Product:2'], fill)).toBe(true);
    }
    // A fill marked after the write is good again.
    const later = await markOfNewRequest(other);
    await one.mark({});
    expect(one.unchangedSince(['e:Product:1'], later)).toBe(true);
  });

  it('vouches, once started, for the marks the stream still holds the changes since, and for no older one', async () => {
    const fill = await markOfNewRequest(one);
    await other.bump(['e:Product:1']);
    const started = redisEntityStore(connections[1]!, bounds, 60_000, logger);
    await markOfNewRequest(started);
    expect(started.unchangedSince(['e:Product:2'], fill)).toBe(true);
    expect(started.unchangedSince(['e:Product:1'], fill)).toBe(false);
    // The changes since `fill` lost to trimming: a replica started now cannot vouch for it.
    await admin.xtrim('ordergraph:entity:changes', 'MAXLEN', 0);
    const startedLater = redisEntityStore(connections[1]!, bounds, 60_000, logger);
    await markOfNewRequest(startedLater);
    expect(startedLater.unchangedSince(['e:Product:2'], fill)).toBe(false);
    expect(startedLater.unchangedSince(['e:Product:2'], await markOfNewRequest(startedLater))).toBe(true);

    const beforePurge = await markOfNewRequest(one);
    await other.purgeAll();
    await markOfNewRequest(one);
    expect(one.unchangedSince([], beforePurge)).toBe(false);

    const beforeFlush = await markOfNewRequest(one);
    await admin.flushall();
    await markOfNewRequest(one);
    expect(one.unchangedSince([], beforeFlush)).toBe(false);
  });

  it('vouches for nothing while Redis is away', async () => {
    await markOfNewRequest(one);
    connections[0]!.disconnect();
    expect(await one.mark({})).toBeUndefined();
  });

  it('holds in one process without Redis', async () => {
    const memory = memoryEntityStore(bounds);
    const fill = (await memory.mark({}))!;
    await memory.bump(['e:Product:1']);
    expect(memory.unchangedSince(['e:Product:1'], fill)).toBe(false);
    expect(memory.unchangedSince(['e:Product:2'], fill)).toBe(true);
    const later = (await memory.mark({}))!;
    await memory.purgeAll();
    expect(memory.unchangedSince([], later)).toBe(false);
  });

  it('stays true past its bound: a generation it forgets makes every mark before its change unvouched', () => {
    const seen = new ChangesSeen(2);
    seen.startAt('10-0');
    seen.record('11-0', ['a']);
    seen.record('12-0', ['b']);
    seen.record('13-0', ['c']);
    // `a` is forgotten: a mark before its change cannot be vouched for, one after it can.
    expect(seen.unchangedSince(['x'], '10-5')).toBe(false);
    expect(seen.unchangedSince(['x'], '11-0')).toBe(true);
    expect(seen.unchangedSince(['b'], '11-0')).toBe(false);
    expect(seen.unchangedSince(['b', 'c'], '13-0')).toBe(true);
    // Marks compare as numbers, not text.
    expect(seen.unchangedSince(['c'], '9-0')).toBe(false);
    expect(seen.unchangedSince(['c'], '100-0')).toBe(true);
  });
});
