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
  const q = query.trim().toLowerCase();
  const t = text.toLowerCase();
  if (q.length === 0) return 0;
  if (t === q) return 3;
  if (t.startsWith(q)) return 2;
  if (t.split(/[\s@._-]+/).some((word) => word.startsWith(q))) return 1.5;
  return t.includes(q) ? 1 : 0;
}

/** A MongoDB `$regex` source matching `text` literally, for substring search on an indexed lower-cased field. */
export function literalPattern(text: string): string {
  return text.trim().toLowerCase().replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Best first, then by type name, then by ID: a total order, so results never shuffle between calls. */
export function compareHits(a: SearchHit & { typename: string }, b: SearchHit & { typename: string }): number {
  return b.score - a.score || a.typename.localeCompare(b.typename) || a.id.localeCompare(b.id);
}
