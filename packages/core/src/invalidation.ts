// What a subgraph's write changed, told to the gateway's entity cache in the write's own response (Apollo Router's
// format: `extensions.invalidation`), so that the cache drops exactly that and keeps the rest. A subgraph that tells
// nothing may have changed anything it holds: the gateway drops every type it defines or extends.
import { currentRequest } from './logger.js';

/** The response extension that carries a write's invalidations. */
export const INVALIDATION_EXTENSION = 'invalidation';

/** One entity of a type (by its key fields), or every entity of a type. */
export type Invalidation =
  | { kind: 'entity'; subgraph: string; type: string; key: Record<string, unknown> }
  | { kind: 'type'; subgraph: string; type: string };

const declared = new WeakMap<object, Invalidation[]>();

/**
 * Declares, while serving a request, what its write changed: the entity written and every entity whose fields or
 * lists it changed (an order's owner, whose `orders` list grew). Call it once the write has committed.
 */
export function declareInvalidation(...invalidations: Invalidation[]): void {
  const request = currentRequest();
  if (!request) return;
  const list = declared.get(request) ?? [];
  list.push(...invalidations);
  declared.set(request, list);
}

/** What the request being served has declared, if anything. */
export function declaredInvalidations(): readonly Invalidation[] | undefined {
  const request = currentRequest();
  return request ? declared.get(request) : undefined;
}

/** The invalidations a response's extensions carry, when well formed; undefined when it carries none. */
export function invalidationsIn(extensions: unknown): Invalidation[] | undefined {
  const value = (extensions as Record<string, unknown> | null | undefined)?.[INVALIDATION_EXTENSION];
  if (!Array.isArray(value)) return undefined;
  const valid = value.filter(
    (item): item is Invalidation =>
      typeof item === 'object' &&
      item !== null &&
      typeof item.type === 'string' &&
      typeof item.subgraph === 'string' &&
      (item.kind === 'type' || (item.kind === 'entity' && typeof item.key === 'object' && item.key !== null)),
  );
  // One malformed item and none of them is trusted: the gateway takes the write for one that declared nothing.
  return valid.length === value.length ? valid : undefined;
}
