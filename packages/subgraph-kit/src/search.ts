// Relevance for search(query): each subgraph scores its own matches the same way, so their hits merge fairly.

export interface SearchHit {
  /** Global ID of the matching entity. */
  id: string;
  score: number;
}

/** Results of search(query) at most, across all types. */
export const SEARCH_LIMIT = 20;

/** 3 exact, 2 prefix, 1.5 prefix of a later word, 1 substring, 0 no match; case-insensitive. */
export function relevance(query: string, text: string | null | undefined): number {
  if (!text) return 0;
  const term = searchTerm(query);
  const candidate = text.toLowerCase();
  if (term.length === 0) return 0;
  if (candidate === term) return 3;
  if (candidate.startsWith(term)) return 2;
  if (candidate.split(/[\s@._-]+/).some((word) => word.startsWith(term))) return 1.5;
  return candidate.includes(term) ? 1 : 0;
}

/** The text search looks for: trimmed and lower-cased, as the searched fields are stored. */
export const searchTerm = (text: string): string => text.trim().toLowerCase();

/** Query words past this many are ignored: each one is a condition every candidate is checked against. */
export const MAX_SEARCH_WORDS = 8;

/**
 * The words a text is found by: lower-cased, accents removed, split at anything not a letter or digit
 * ("Berners-Lee" -> berners, lee; "user1@example.com" -> user1, example, com), each once. Stored with each document
 * and indexed (the inverted index of search), and applied to the query the same way.
 */
export function searchWords(...texts: (string | null | undefined)[]): string[] {
  const words = new Set<string>();
  for (const text of texts) {
    if (!text) continue;
    for (const word of text.normalize('NFD').replace(/\p{M}+/gu, '').toLowerCase().split(/[^\p{L}\p{N}]+/u)) if (word) words.add(word);
  }
  return [...words];
}

/**
 * A filter matching documents whose `field` (their search words) holds every word of `query`; null when the query
 * has no words. Answered by the multikey index on that field, in both backends.
 */
export function allWords(field: string, query: string): Record<string, unknown> | null {
  const words = searchWords(query).slice(0, MAX_SEARCH_WORDS);
  return words.length === 0 ? null : { [field]: { $all: words } };
}

/**
 * Gives the documents stored before search read `words` (a MongoDB database or DATA_DIR of an earlier version) their
 * words, a batch at a time. The words index lists a document without the field under null, so finding them reads
 * the index, and costs one empty lookup at every later start.
 */
export async function backfillWords<T extends { _id: string }>(
  collection: { find(filter: Record<string, unknown>, options: { sort: Record<string, 1 | -1>; limit?: number }): Promise<T[]>; findOneAndUpdate(filter: Record<string, unknown>, update: { $set: Record<string, unknown> }): Promise<T | null> },
  wordsOf: (doc: T) => string[],
): Promise<number> {
  let filled = 0;
  for (;;) {
    const stale = await collection.find({ words: null }, { sort: { _id: 1 }, limit: 500 });
    for (const doc of stale) await collection.findOneAndUpdate({ _id: doc._id, words: null }, { $set: { words: wordsOf(doc) } });
    filled += stale.length;
    if (stale.length < 500) return filled;
  }
}

/** The score of a document that holds every word of the query: its relevance, and never below a plain match's 1. */
export const wordMatchScore = (query: string, ...texts: (string | null | undefined)[]): number => Math.max(1, ...texts.map((text) => relevance(query, text)));

/**
 * A filter (MongoDB's query language, which both stores evaluate) matching documents whose `field` contains `term`
 * as plain text. A substring test, not `$regex`: no client's text is ever compiled into a regular expression, so no
 * pattern can be made to backtrack or fail to compile. `$literal` keeps a term starting with `$` from being read as
 * a field path. Byte offsets suffice: in UTF-8 a string contains another exactly when its bytes do.
 */
export function containsText(field: string, term: string): Record<string, unknown> {
  return { $expr: { $gte: [{ $indexOfBytes: [`$${field}`, { $literal: term }] }, 0] } };
}

/** Best first, then by type name, then by ID: a total order, so results never shuffle between calls. */
export function compareHits(a: SearchHit & { typename: string }, b: SearchHit & { typename: string }): number {
  return b.score - a.score || a.typename.localeCompare(b.typename) || a.id.localeCompare(b.id);
}
