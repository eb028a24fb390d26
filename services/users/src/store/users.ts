// The users collection: stored documents, the queries on them, and the unique-email rule, for either backend.
import { randomUUID } from 'node:crypto';
import { type Keyset, type Role } from '@ordergraph/core';
import {
  DuplicateKeyError,
  findByIdsInKeyOrder,
  type DocumentCollection,
  type DocumentDatabase,
  type Filter,
  type IndexSpec,
} from '@ordergraph/store';
import { allWords, backfillWords, searchWords, wordMatchScore } from '@ordergraph/subgraph-kit';

export interface UserDoc {
  [key: string]: unknown;
  _id: string;
  /** Stored lower-cased: addresses are compared case-insensitively and unique. */
  email: string;
  name: string | null;
  /** The words of name and email (searchWords), the indexed field search reads. */
  words: string[];
  role: Role;
  createdAt: Date;
}

export interface UserFilter {
  email?: string | null | undefined;
  role?: Role | null | undefined;
  createdAfter?: Date | null | undefined;
}

export interface NewUser {
  email: string;
  name: string;
  role: Role;
}

export class EmailTakenError extends Error {
  override readonly name = 'EmailTakenError';
}

export interface KeysetPage {
  docs: UserDoc[];
  hasNextPage: boolean;
  hasPreviousPage: boolean;
}

/** Every query below reads one of these (docs/operating.md, Indexes, lists them with the API fields they serve). */
const USER_INDEXES: IndexSpec[] = [
  // users(filter: {email}), and the rule that an address belongs to one user.
  { name: 'email_unique', key: { email: 1 }, unique: true },
  // users and usersConnection, oldest first, unfiltered or createdAfter: ordered, so an offset is a position.
  { name: 'createdAt_id', key: { createdAt: 1, _id: 1 } },
  // The same filtered by role.
  { name: 'role_createdAt_id', key: { role: 1, createdAt: 1, _id: 1 } },
  // search(query): the users holding every word, in _id order.
  { name: 'words_id', key: { words: 1, _id: 1 }, multikey: true },
];

/** The documents a search ranks at most: the first that hold every word, in _id order. */
const SEARCH_CANDIDATES = 500;

const OLDEST_FIRST = { createdAt: 1, _id: 1 } as const;
const NEWEST_FIRST = { createdAt: -1, _id: -1 } as const;

/**
 * Documents strictly after (or before) a keyset position in (createdAt, _id) order. The range on createdAt bounds the
 * index scan; the `$or` only separates the documents created in the position's very millisecond.
 */
function beyond(position: Keyset, direction: 'after' | 'before'): Filter {
  const op = direction === 'after' ? '$gt' : '$lt';
  return {
    createdAt: { [`${op}e`]: position.createdAt },
    $or: [{ createdAt: { [op]: position.createdAt } }, { _id: { [op]: position.id } }],
  };
}

export class UserStore {
  private constructor(private readonly users: DocumentCollection<UserDoc>) {}

  static async open(db: DocumentDatabase): Promise<UserStore> {
    return new UserStore(await db.collection<UserDoc>('users', USER_INDEXES));
  }

  /**
   * Gives the users stored before search read `words` (by an earlier version) their words; returns how many. The
   * server runs it in the background at start; it reads the words index, so it costs one empty lookup once done.
   */
  fillSearchWords(): Promise<number> {
    return backfillWords(this.users, (doc) => searchWords(doc.name, doc.email));
  }

  /** One query for a batch of ids; results in key order, null for a missing id. */
  findByIds(ids: readonly string[]): Promise<(UserDoc | null)[]> {
    return findByIdsInKeyOrder(this.users, ids);
  }

  filterOf(filter: UserFilter | null | undefined): Filter {
    const query: Filter = {};
    if (filter?.email) query['email'] = filter.email.trim().toLowerCase();
    if (filter?.role) query['role'] = filter.role;
    if (filter?.createdAfter) query['createdAt'] = { $gt: filter.createdAfter };
    return query;
  }

  /** Offset pagination, oldest first. */
  async list(filter: UserFilter | null | undefined, page: { limit: number; offset: number }): Promise<UserDoc[]> {
    if (page.limit === 0) return [];
    return this.users.find(this.filterOf(filter), { sort: OLDEST_FIRST, skip: page.offset, limit: page.limit });
  }

  async count(filter: UserFilter | null | undefined): Promise<number> {
    return this.users.count(this.filterOf(filter));
  }

  /**
   * Keyset pagination in (createdAt, _id) order: `first` after a position or `last` before one. Reads one extra
   * document to know whether more follow, and probes the other side for the opposite flag.
   */
  async page(
    filter: UserFilter | null | undefined,
    window: { first: number; after?: Keyset | undefined } | { last: number; before?: Keyset | undefined },
  ): Promise<KeysetPage> {
    const base = this.filterOf(filter);
    const and = (...parts: Filter[]): Filter => {
      const nonEmpty = parts.filter((part) => Object.keys(part).length > 0);
      return nonEmpty.length === 0 ? {} : nonEmpty.length === 1 ? nonEmpty[0]! : { $and: nonEmpty };
    };
    if ('first' in window) {
      const docs = await this.users.find(and(base, window.after ? beyond(window.after, 'after') : {}), {
        sort: OLDEST_FIRST,
        limit: window.first + 1,
      });
      const hasPreviousPage = window.after
        ? (await this.users.find(and(base, beyond(window.after, 'before')), { sort: NEWEST_FIRST, limit: 1 })).length > 0
        : false;
      return { docs: docs.slice(0, window.first), hasNextPage: docs.length > window.first, hasPreviousPage };
    }
    const docs = await this.users.find(and(base, window.before ? beyond(window.before, 'before') : {}), {
      sort: NEWEST_FIRST,
      limit: window.last + 1,
    });
    const hasNextPage = window.before
      ? (await this.users.find(and(base, beyond(window.before, 'after')), { sort: OLDEST_FIRST, limit: 1 })).length > 0
      : false;
    return { docs: docs.slice(0, window.last).reverse(), hasNextPage, hasPreviousPage: docs.length > window.last };
  }

  async create(input: NewUser, now = new Date()): Promise<UserDoc> {
    const name = input.name.trim();
    const doc: UserDoc = {
      _id: randomUUID(),
      email: input.email.trim().toLowerCase(),
      name,
      words: searchWords(name, input.email.trim().toLowerCase()),
      role: input.role,
      createdAt: now,
    };
    try {
      await this.users.insertOne(doc);
    } catch (error) {
      if (error instanceof DuplicateKeyError && error.index === 'email_unique') throw new EmailTakenError(doc.email);
      throw error;
    }
    return doc;
  }

  /**
   * Users whose name and email together hold every word of `text` (whole words, case- and accent-insensitive), best
   * first, at most `limit`; only the first 500 such users in id order are ranked.
   */
  async search(text: string, limit: number): Promise<{ doc: UserDoc; score: number }[]> {
    const filter = allWords('words', text);
    if (filter === null || limit === 0) return [];
    const matches = await this.users.find(filter, { sort: { _id: 1 }, limit: SEARCH_CANDIDATES });
    return matches
      .map((doc) => ({ doc, score: wordMatchScore(text, doc.name, doc.email) }))
      .sort((a, b) => b.score - a.score || a.doc._id.localeCompare(b.doc._id))
      .slice(0, limit);
  }

  /** Loads documents as they are (seed data), a batch at a time; skipped when the collection already has users. */
  async seed(batches: Iterable<UserDoc[]>): Promise<number> {
    if ((await this.users.count({})) > 0) return 0;
    let written = 0;
    for (const docs of batches) {
      await this.users.insertMany(docs);
      written += docs.length;
    }
    return written;
  }
}
