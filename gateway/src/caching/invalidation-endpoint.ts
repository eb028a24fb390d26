// POST /cache/invalidate: how a subgraph team (with the shared key) or an administrator (with an ADMIN token) drops
// what both caches hold of data that changed without a write through the gateway: a backfill, a job, a write straight
// to a subgraph. Apollo Router's invalidation endpoint is the model; its request bodies are accepted as they are.
import { createHash, timingSafeEqual } from 'node:crypto';
import { ErrorCode } from '@ordergraph/core';
import { errorResponse } from '../security/errors.js';

export const CACHE_INVALIDATION_PATH = '/cache/invalidate';
/** Where earlier versions took an administrator's purge: answered the same. */
export const LEGACY_PURGE_PATH = '/entity-cache/purge';
/** The header a caller without an ADMIN token proves it holds CACHE_INVALIDATION_KEY with. */
export const INVALIDATION_KEY_HEADER = 'x-cache-invalidation-key';
/** The most invalidations one request may carry. */
const MAX_ITEMS = 100;

export type CacheInvalidation = { kind: 'everything' } | { kind: 'type'; type: string } | { kind: 'entity'; type: string; id: string };

const FORMS = '{}, { "type": "Product" }, { "type": "Product", "id": "..." }, Apollo Router\'s { "kind": "type" | "entity", ... }, or an array of them';

/** The invalidations a request body asks for, or what is wrong with it. */
export function parseInvalidations(body: unknown, knownType: (name: string) => boolean): CacheInvalidation[] | string {
  const items = Array.isArray(body) ? body : [body];
  if (items.length === 0 || items.length > MAX_ITEMS) return `Give 1 to ${MAX_ITEMS} invalidations`;
  const parsed: CacheInvalidation[] = [];
  for (const item of items) {
    if (!item || typeof item !== 'object' || Array.isArray(item)) return `Each invalidation is an object: ${FORMS}`;
    const { kind, type, id, key, subgraph } = item as Record<string, unknown>;
    const keyId = key && typeof key === 'object' && !Array.isArray(key) && Object.keys(key).length === 1 ? (key as Record<string, unknown>)['id'] : undefined;
    if (subgraph !== undefined && typeof subgraph !== 'string') return '"subgraph" must be a subgraph name';
    if (kind === undefined && type === undefined && id === undefined && key === undefined) {
      parsed.push({ kind: 'everything' });
      continue;
    }
    if (typeof type !== 'string' || !knownType(type)) return `"type" must name an object type of the supergraph: ${FORMS}`;
    const entityId = kind === 'entity' ? keyId : id;
    if (kind === 'entity' || (kind === undefined && id !== undefined)) {
      if (typeof entityId !== 'string' && typeof entityId !== 'number') return 'An entity is named by its "id" (a string), or Apollo\'s "key": { "id": ... }';
      parsed.push({ kind: 'entity', type, id: String(entityId) });
    } else if (kind === 'type' || kind === undefined) {
      parsed.push({ kind: 'type', type });
    } else {
      return `"kind" must be "type" or "entity": ${FORMS}`;
    }
  }
  return parsed;
}

const digest = (value: string) => createHash('sha256').update(value).digest();

/**
 * Who may invalidate: a caller presenting the shared key (compared in constant time), or an administrator. Undefined
 * when allowed, else the refusal to send.
 */
export function refusal(request: Request, key: string | undefined, role: string | undefined): Response | undefined {
  const presented = request.headers.get(INVALIDATION_KEY_HEADER);
  if (presented !== null) {
    if (key !== undefined && timingSafeEqual(digest(presented), digest(key))) return undefined;
    return errorResponse(401, ErrorCode.UNAUTHENTICATED, `The ${INVALIDATION_KEY_HEADER} header does not match CACHE_INVALIDATION_KEY`);
  }
  if (role === undefined) return errorResponse(401, ErrorCode.UNAUTHENTICATED, `A bearer token or the ${INVALIDATION_KEY_HEADER} header is required`, { 'www-authenticate': 'Bearer' });
  if (role !== 'ADMIN') return errorResponse(403, ErrorCode.FORBIDDEN, 'Only administrators, or callers with the invalidation key, may invalidate the caches');
  return undefined;
}
