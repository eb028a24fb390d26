// Where the entity cache keeps its entries and the generations that vouch for them: Redis, shared by every replica,
// with a small bounded layer in this process; without Redis, this process alone (one replica, development).
import { createHash, randomBytes } from 'node:crypto';
import type { Logger, Redis } from '@ordergraph/core';
import { isConnected, oncePerTurn, readMany, readsOf } from '../shared/shared-state.js';

const PREFIX = 'ordergraph:entity:';
/** A random value shared by every replica; every stamp starts with it, so replacing it drops every entry at once. */
const EPOCH_KEY = `${PREFIX}epoch`;
/**
 * A stream of the generations each write set, appended once they are set: what a replica reads to keep its mirror of
 * the generations true (redisEntityStore). Each change's `g` field is a JSON array of generation names, or `*` for
 * all of them (a new epoch).
 */
const CHANGES_KEY = `${PREFIX}changes`;
const EVERYTHING = '*';
/** The generations a change of the stream names, or undefined when it is not one this store wrote. */
function namesIn(fields: string[]): string[] | typeof EVERYTHING | undefined {
  if (fields.length !== 2 || fields[0] !== 'g') return undefined;
  if (fields[1] === EVERYTHING) return EVERYTHING;
  try {
    const names: unknown = JSON.parse(fields[1]!);
    return Array.isArray(names) && names.every((name) => typeof name === 'string') ? names : undefined;
  } catch {
    return undefined;
  }
}
/** About how many changes the stream keeps; a replica that has not read it since the oldest starts its mirror anew. */
const CHANGES_KEPT = 10_000;
/** The most changes one read of the stream takes; past it, the mirror starts anew. */
const CHANGES_READ = 1_000;
const generationKey = (generation: string) => `${PREFIX}gen:${generation}`;
// Redis holds an entry under the digest of its key, whose text may be long; this process under the key itself.
const entryKey = (key: string) => `${PREFIX}data:${createHash('sha256').update(key).digest('base64url')}`;
/** A generation never set (or expired) reads as this. */
const UNSET = '0';
const EPOCH_TTL_MS = 24 * 3600_000;

const fresh = () => randomBytes(9).toString('base64url');

/**
 * The generations one entry depends on: those it shares with the other entries of its kind (one array for them all, so
 * its part of the stamp is read and joined once) and its own entity's, if it has one.
 */
export interface Dependencies {
  shared: readonly string[];
  own?: string | undefined;
}

/**
 * An entry is kept with the stamp of the generations it depends on as they were read before its subgraph was asked
 * (the epoch, its entity's, its type's, the types it holds): it is served only to a lookup that reads the same stamp.
 * A write sets each generation it changed to a new random value before its response leaves, so every request that
 * begins after it, on any replica, reads a new stamp and the old entries are misses, whichever process layer or Redis
 * holds them; an entry written late by a read that raced the write carries the stamp read before it, and is a miss too.
 */
export interface EntityStore {
  /**
   * The stamp of each entry's generations, no older than when the first lookup of `request` (a request's context)
   * began; undefined when the store cannot vouch for any entry (Redis away).
   */
  stamps(dependencies: readonly Dependencies[], request?: object): Promise<Stamps | undefined>;
  /** Each entry's value when it is kept with that stamp. */
  read(keys: readonly string[], stamps: Stamps): Promise<(string | undefined)[]>;
  /** Keeps entries; never fails and never makes the caller wait. */
  write(entries: readonly StoredEntry[]): void;
  /** Gives each generation a new value; resolves once every replica reads it. Throws when it could not. */
  bump(generations: readonly string[]): Promise<void>;
  /** Drops every entry of every replica. */
  purgeAll(): Promise<void>;
  /**
   * Where the changes stand for this request (a request's context), no older than when its first call began: a mark to
   * keep with what it reads next (the response cache's fills). Undefined when the store cannot vouch (Redis away).
   */
  mark(request: object): Promise<string | undefined>;
  /**
   * Whether none of the generations changed after `mark`, as far as this replica has read the changes: true only when
   * it knows every change since `mark`. Called after `mark(request)`, so that it knows every change acknowledged before
   * the request began.
   */
  unchangedSince(generations: readonly string[], mark: string): boolean;
}

/**
 * Each entry's stamp in two parts, side by side (nothing joined per entry): the part it shares with the others of its
 * kind (the epoch and their generations' values, joined once for them all) and its own entity's generation's value.
 */
export interface Stamps {
  shared: string[];
  own: (string | undefined)[];
}

export interface StoredEntry {
  key: string;
  /** Its stamp's parts, as `stamps` gave them. */
  stamp: string;
  own: string | undefined;
  value: string;
  ttlMs: number;
}

export interface MemoryBounds {
  entries: number;
  bytes: number;
}

/** Each entry's stamp from the epoch and the values of its generations (`valueOf`). */
function stampsOf(epoch: string, dependencies: readonly Dependencies[], valueOf: (generation: string) => string): Stamps {
  const sharedStamps = new Map<readonly string[], string>();
  const stamps: Stamps = { shared: new Array<string>(dependencies.length), own: new Array<string | undefined>(dependencies.length) };
  dependencies.forEach(({ shared, own }, n) => {
    let stamp = sharedStamps.get(shared);
    if (stamp === undefined) {
      stamp = epoch;
      for (const generation of shared) stamp += `|${valueOf(generation)}`;
      sharedStamps.set(shared, stamp);
    }
    stamps.shared[n] = stamp;
    stamps.own[n] = own === undefined ? undefined : valueOf(own);
  });
  return stamps;
}

/** Every generation the entries depend on, each once. */
function distinctGenerations(dependencies: readonly Dependencies[]): string[] {
  const names = new Set<string>();
  const seen = new Set<readonly string[]>();
  for (const { shared, own } of dependencies) {
    if (!seen.has(shared)) {
      seen.add(shared);
      for (const generation of shared) names.add(generation);
    }
    if (own !== undefined) names.add(own);
  }
  return [...names];
}

interface Held {
  stamp: string;
  own: string | undefined;
  value: string;
  expires: number;
  bytes: number;
  /** Read since the eviction last passed it over. */
  read: boolean;
}

/**
 * The in-process layer, bounded in entries and in (approximate, UTF-16) bytes. Evicted oldest first, but an entry read
 * since it was last passed over gets a second chance at the back (CLOCK, close to least recently used): a read only
 * marks its entry, where moving it to the back on every read (a delete and a set on the map) cost every hit.
 */
export class BoundedEntries {
  private readonly held = new Map<string, Held>();
  private bytes = 0;
  constructor(private readonly bounds: MemoryBounds) {}

  /** `stamp` and `own`: the parts of its stamp now (Stamps); `now`: Date.now(), read once for every entry a lookup reads. */
  get(key: string, stamp: string, own: string | undefined, now = Date.now()): string | undefined {
    const entry = this.held.get(key);
    if (!entry) return undefined;
    if (entry.stamp !== stamp || entry.own !== own || entry.expires <= now) {
      this.delete(key, entry);
      return undefined;
    }
    entry.read = true;
    return entry.value;
  }

  /** `get` for each key with its stamp's parts, the clock read once for them all. */
  getAll(keys: readonly string[], stamps: Stamps, now = Date.now()): (string | undefined)[] {
    return keys.map((key, i) => this.get(key, stamps.shared[i]!, stamps.own[i], now));
  }

  set(key: string, stamp: string, own: string | undefined, value: string, expires: number): void {
    const bytes = 2 * (key.length + stamp.length + (own?.length ?? 0) + value.length);
    if (bytes > this.bounds.bytes) return;
    const previous = this.held.get(key);
    if (previous) this.delete(key, previous);
    this.held.set(key, { stamp, own, value, expires, bytes, read: false });
    this.bytes += bytes;
    // A marked entry is unmarked and moved to the back, and so is the new one (it is never the one to go): once every
    // other entry has been passed over once, the next is unmarked, so the loop ends.
    for (const [oldest, entry] of this.held) {
      if (this.held.size <= this.bounds.entries && this.bytes <= this.bounds.bytes) break;
      if (entry.read || oldest === key) {
        entry.read = false;
        this.held.delete(oldest);
        this.held.set(oldest, entry);
      } else {
        this.delete(oldest, entry);
      }
    }
  }

  clear(): void {
    this.held.clear();
    this.bytes = 0;
  }

  get size(): { entries: number; bytes: number } {
    return { entries: this.held.size, bytes: this.bytes };
  }

  private delete(key: string, entry: Held) {
    this.held.delete(key);
    this.bytes -= entry.bytes;
  }
}

/** Orders two marks: stream IDs (`<ms>-<seq>`) of Redis, or `0-<n>` of one process. */
export function compareMarks(a: string, b: string): number {
  const dashA = a.indexOf('-');
  const dashB = b.indexOf('-');
  return Number(a.slice(0, dashA)) - Number(b.slice(0, dashB)) || Number(a.slice(dashA + 1)) - Number(b.slice(dashB + 1));
}

/** Past every mark: what is known before a first reading of the changes vouches for nothing. */
const UNKNOWN = `${Number.MAX_SAFE_INTEGER}-0`;

/**
 * The changes a replica has read since it started reading them (`startAt`): the latest mark of each generation changed,
 * bounded; a generation forgotten moves `floor` past its change, so that no mark before it is vouched for.
 */
export class ChangesSeen {
  private readonly latest = new Map<string, string>();
  private floor = UNKNOWN;
  private everything = '0-0';
  constructor(private readonly bound: number) {}

  startAt(mark: string): void {
    this.latest.clear();
    this.floor = mark;
    this.everything = '0-0';
  }

  record(mark: string, generations: readonly string[] | typeof EVERYTHING): void {
    if (generations === EVERYTHING) {
      if (compareMarks(mark, this.everything) > 0) this.everything = mark;
      return;
    }
    for (const generation of generations) {
      const known = this.latest.get(generation);
      if (known !== undefined && compareMarks(known, mark) >= 0) continue;
      this.latest.delete(generation);
      this.latest.set(generation, mark);
    }
    for (const [generation, forgotten] of this.latest) {
      if (this.latest.size <= this.bound) break;
      this.latest.delete(generation);
      if (compareMarks(forgotten, this.floor) > 0) this.floor = forgotten;
    }
  }

  unchangedSince(generations: readonly string[], mark: string): boolean {
    if (compareMarks(mark, this.floor) < 0 || compareMarks(mark, this.everything) < 0) return false;
    for (const generation of generations) {
      const changed = this.latest.get(generation);
      if (changed !== undefined && compareMarks(changed, mark) > 0) return false;
    }
    return true;
  }
}

/**
 * Redis holds the entries (each with its TTL), the generations (each kept longer than any entry: `generationTtlMs`),
 * the epoch and the stream of changes. This process holds a small bounded layer of entries, and a mirror of the
 * generations it has read.
 *
 * The mirror is what spares a request's lookups a Redis read per step of its plan: a request's first lookup reads the
 * stream once (one XRANGE shared by the requests of a turn of the event loop) from where the mirror last read it, and
 * drops from the mirror every generation a write set since; from then on its lookups take the mirror's values, and
 * read from Redis only the generations it lacks (one MGET shared by a turn's lookups). A write sets its generations
 * and then appends them to the stream before its response leaves, so a request that begins after it, through any
 * replica, drops them: reads stay your own writes across replicas. A value read from Redis joins the mirror only if no
 * change was read between the read being sent and its answer (else it may predate that change).
 *
 * While Redis is away nothing is served and nothing kept. A replica that lost Redis (its connection closed, a command
 * failed, a write's generations not set) serves nothing more until it has replaced the epoch, which drops every entry
 * anywhere: a write that could not reach Redis meanwhile, through this replica or another, leaves no entry to be
 * served stale once Redis is back.
 */
export function redisEntityStore(redis: Redis, bounds: MemoryBounds, generationTtlMs: number, logger: Logger): EntityStore {
  const local = new BoundedEntries(bounds);
  const readGenerations = readsOf(redis);
  // The generations (and the epoch, under its key) as read; `position`: the last change of the stream they account
  // for, undefined while there is none to read from (at first, after Redis was lost, or while starting anew).
  const mirror = new Map<string, string>();
  let position: string | undefined;
  // The changes read since the mirror's position was last set anew (what `unchangedSince` answers from).
  const seen = new ChangesSeen(CHANGES_KEPT);
  // A mark is `<epoch>/<position>`: a stream made anew after Redis was emptied numbers its changes from the clock
  // again, so a mark of the old one must never be compared with the new one's. The epoch is read once per turn of the
  // requests that take a mark (the response cache's), beside their read of the stream.
  let epochMarked: string | undefined;
  const readEpoch = oncePerTurn(async (): Promise<string | undefined> => {
    const epoch = await redis.get(EPOCH_KEY);
    epochMarked = epoch ?? undefined;
    if (epoch !== null) return epoch;
    // Vouched for from the next turn.
    await startEpoch();
    return undefined;
  });
  const forget = () => {
    mirror.clear();
    position = undefined;
    seen.startAt(UNKNOWN);
    epochMarked = undefined;
  };
  let unsure = false;
  const lost = () => {
    unsure = true;
    forget();
    local.clear();
  };
  redis.on('close', lost);

  const appendChange = async (generations: readonly string[] | typeof EVERYTHING): Promise<string> => {
    const [id] = await Promise.all([
      redis.xadd(CHANGES_KEY, 'MAXLEN', '~', String(CHANGES_KEPT), '*', 'g', generations === EVERYTHING ? EVERYTHING : JSON.stringify(generations)),
      redis.pexpire(CHANGES_KEY, generationTtlMs),
    ]);
    return id!;
  };
  /**
   * First use, or Redis emptied: an epoch no entry, stamp or mark held anywhere can carry, and every mirror anew (one
   * replica sets it; the others read it next).
   */
  const startEpoch = async () => {
    if ((await redis.set(EPOCH_KEY, fresh(), 'PX', EPOCH_TTL_MS, 'NX')) === 'OK') await appendChange(EVERYTHING);
  };
  /** Drops from the mirror what a change of the stream names, and notes it as seen. Throws on a change it cannot read. */
  const drop = (id: string, fields: string[]) => {
    const names = namesIn(fields);
    if (names === undefined) throw new Error(`entity cache: unreadable change ${id} in the stream`);
    if (names === EVERYTHING) mirror.clear();
    else for (const name of names) mirror.delete(name);
    seen.record(id, names);
  };
  /** Brings the mirror up to the stream's end: every change before this read began is accounted for once it resolves. */
  const follow = oncePerTurn(async () => {
    const from = position;
    const changes = from === undefined ? [] : await redis.xrange(CHANGES_KEY, from, '+', 'COUNT', CHANGES_READ + 1);
    if (position !== undefined && position !== from) {
      // Another read of the stream moved the mirror on meanwhile (or started it anew, from a later change): this one's
      // changes are dropped all the same, which is never wrong.
      for (const [id, fields] of changes) drop(id, fields);
      return;
    }
    if (position !== undefined && changes[0]?.[0] === from && changes.length <= CHANGES_READ) {
      for (const [id, fields] of changes.slice(1)) {
        drop(id, fields);
        position = id;
      }
      return;
    }
    // No mirror yet, or its position no longer in the stream (trimmed, expired, Redis restarted empty), or too far
    // behind: it starts anew, from the stream's latest changes (so that it vouches for the marks of what other replicas
    // kept since the oldest of them), or from a change of nothing appended now when there are none.
    forget();
    const latest = (await redis.xrevrange(CHANGES_KEY, '+', '-', 'COUNT', CHANGES_READ)).reverse();
    if (latest.length === 0) {
      position = await appendChange([]);
      seen.startAt(position);
      return;
    }
    seen.startAt(latest[0]![0]);
    for (const [id, fields] of latest) {
      const names = namesIn(fields);
      // What it cannot read it vouches for nothing before.
      if (names === undefined) seen.startAt(id);
      else seen.record(id, names);
    }
    position = latest.at(-1)![0];
  });
  // Per request (its context): its first lookup's read of the stream.
  const followed = new WeakMap<object, Promise<void>>();
  const followFor = (request: object | undefined): Promise<void> => {
    if (!request) return follow();
    let done = followed.get(request);
    if (!done) followed.set(request, (done = follow()));
    return done;
  };

  const renewEpoch = async () => {
    await redis.set(EPOCH_KEY, fresh(), 'PX', EPOCH_TTL_MS);
    local.clear();
    forget();
    await appendChange(EVERYTHING);
  };
  const usable = async (): Promise<boolean> => {
    if (!isConnected(redis)) {
      lost();
      return false;
    }
    if (!unsure) return true;
    try {
      await renewEpoch();
      unsure = false;
      logger.info('entity cache: epoch replaced, Redis being reachable again');
      return true;
    } catch {
      return false;
    }
  };
  return {
    async stamps(dependencies, request) {
      if (!(await usable())) return undefined;
      try {
        await followFor(request);
        const names = distinctGenerations(dependencies);
        const epoch = mirror.get(EPOCH_KEY);
        if (epoch !== undefined && names.every((name) => mirror.has(name))) return stampsOf(epoch, dependencies, (name) => mirror.get(name)!);
        // Those the mirror holds, as they are now (it may change while the others are read), and the others.
        const current = new Map<string, string>();
        const missing: string[] = [];
        for (const name of names) {
          const held = epoch === undefined ? undefined : mirror.get(name);
          if (held === undefined) missing.push(name);
          else current.set(name, held);
        }
        const keys = new Array<string>(missing.length + 1);
        keys[0] = EPOCH_KEY;
        for (let i = 0; i < missing.length; i++) keys[i + 1] = generationKey(missing[i]!);
        const sentAt = position;
        const values = await readGenerations(keys);
        const read = values[0];
        if (!read) {
          await startEpoch();
          return undefined;
        }
        const joins = sentAt !== undefined && position === sentAt;
        // Bounded like the entries: a full mirror starts anew (empty, it is true at any position).
        if (joins && mirror.size + missing.length > bounds.entries) mirror.clear();
        if (joins) mirror.set(EPOCH_KEY, read);
        for (let i = 0; i < missing.length; i++) {
          const value = values[i + 1] ?? UNSET;
          current.set(missing[i]!, value);
          if (joins) mirror.set(missing[i]!, value);
        }
        // The epoch as read with the others: an entry stamped with it is then never older than what it was read with.
        return stampsOf(read, dependencies, (name) => current.get(name)!);
      } catch (error) {
        lost();
        logger.warn({ err: error }, 'entity cache: generations unreadable');
        return undefined;
      }
    },
    async read(keys, stamps) {
      const now = Date.now();
      const values = local.getAll(keys, stamps, now);
      const missing: number[] = [];
      for (let i = 0; i < values.length; i++) if (values[i] === undefined) missing.push(i);
      if (missing.length === 0) return values;
      try {
        const stored = await readMany(redis, missing.map((i) => entryKey(keys[i]!)));
        missing.forEach((i, n) => {
          const json = stored[n];
          if (!json) return;
          // No `o` where the entry has no entity of its own (older versions joined it into `s`: a miss here).
          const entry = JSON.parse(json) as { s: string; o?: string; x: number; v: string };
          if (entry.s !== stamps.shared[i] || entry.o !== stamps.own[i] || entry.x <= now) return;
          values[i] = entry.v;
          local.set(keys[i]!, entry.s, entry.o, entry.v, entry.x);
        });
      } catch (error) {
        logger.warn({ err: error }, 'entity cache: entries unreadable');
      }
      return values;
    },
    write(entries) {
      for (const { key, stamp, own, value, ttlMs } of entries) {
        const expires = Date.now() + ttlMs;
        local.set(key, stamp, own, value, expires);
        redis.set(entryKey(key), JSON.stringify({ s: stamp, o: own, x: expires, v: value }), 'PX', ttlMs).catch((error: unknown) => {
          logger.debug({ err: error }, 'entity cache: entry not kept');
        });
      }
    },
    async bump(generations) {
      try {
        if (!isConnected(redis)) throw new Error('Redis is not connected');
        // A new random value, never a counter: a generation that expired and was set again cannot take the value an
        // entry still held was stamped with. Then the change, for every replica's mirror.
        await Promise.all(generations.map((generation) => redis.set(generationKey(generation), fresh(), 'PX', generationTtlMs)));
        await appendChange(generations);
      } catch (error) {
        lost();
        throw error;
      }
    },
    async purgeAll() {
      local.clear();
      await renewEpoch();
    },
    async mark(request) {
      if (!(await usable())) return undefined;
      try {
        const [epoch] = await Promise.all([readEpoch(), followFor(request)]);
        return epoch === undefined || position === undefined ? undefined : `${epoch}/${position}`;
      } catch (error) {
        lost();
        logger.warn({ err: error }, 'entity cache: changes unreadable');
        return undefined;
      }
    },
    unchangedSince(generations, mark) {
      const slash = mark.indexOf('/');
      return slash > 0 && mark.slice(0, slash) === epochMarked && seen.unchangedSince(generations, mark.slice(slash + 1));
    },
  };
}

/** Without Redis: generations and entries in this process only (one replica). */
export function memoryEntityStore(bounds: MemoryBounds): EntityStore {
  const local = new BoundedEntries(bounds);
  let epoch = fresh();
  let generations = new Map<string, string>();
  // Marks are this process's count of changes.
  let changes = 0;
  const seen = new ChangesSeen(bounds.entries);
  seen.startAt('0-0');
  return {
    async stamps(dependencies) {
      return stampsOf(epoch, dependencies, (name) => generations.get(name) ?? UNSET);
    },
    async read(keys, stamps) {
      return local.getAll(keys, stamps);
    },
    write(entries) {
      for (const { key, stamp, own, value, ttlMs } of entries) local.set(key, stamp, own, value, Date.now() + ttlMs);
    },
    async bump(names) {
      // Bounded like the entries: past the bound a new epoch, so that forgetting a generation revives nothing.
      if (generations.size + names.length > bounds.entries) {
        generations = new Map();
        epoch = fresh();
        local.clear();
        seen.record(`0-${++changes}`, EVERYTHING);
      }
      for (const name of names) generations.set(name, fresh());
      seen.record(`0-${++changes}`, names);
    },
    async purgeAll() {
      epoch = fresh();
      generations = new Map();
      local.clear();
      seen.record(`0-${++changes}`, EVERYTHING);
    },
    async mark() {
      return `0-${changes}`;
    },
    unchangedSince: (names, mark) => seen.unchangedSince(names, mark),
  };
}
