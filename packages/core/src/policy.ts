// The authorization vocabulary resolvers use. Subgraphs decide; the gateway only authenticates.
import type { Identity, Viewer } from './auth.js';
import { forbidden, unauthenticated } from './errors.js';

export const isAdmin = (viewer: Viewer): boolean => viewer?.role === 'ADMIN';

/** True when the viewer is the given user or an administrator. */
export const isSelfOrAdmin = (viewer: Viewer, userId: string): boolean =>
  viewer !== null && (viewer.role === 'ADMIN' || viewer.userId === userId);

export function requireSignedIn(viewer: Viewer): Identity {
  if (viewer === null) throw unauthenticated();
  return viewer;
}

export function requireAdmin(viewer: Viewer): Identity {
  const identity = requireSignedIn(viewer);
  if (identity.role !== 'ADMIN') throw forbidden();
  return identity;
}

export function requireSelfOrAdmin(viewer: Viewer, userId: string): Identity {
  const identity = requireSignedIn(viewer);
  if (!isSelfOrAdmin(identity, userId)) throw forbidden();
  return identity;
}

/**
 * The scopes a viewer holds, for Federation's @requiresScopes (checked at the gateway): each role's own and those of
 * the roles below it. Anonymous callers hold none.
 */
export function scopesOf(viewer: Viewer): string[] {
  if (viewer === null) return [];
  return viewer.role === 'ADMIN' ? ['user', 'admin'] : ['user'];
}

/**
 * What a viewer may see, as a key: two viewers with the same key see the same data everywhere (an administrator sees
 * every order and user whoever they are; a user sees their own), so their identical subscriptions can share one stream.
 */
export function visibilityOf(viewer: Viewer): string {
  if (viewer === null) return 'anonymous';
  return viewer.role === 'ADMIN' ? 'ADMIN' : `USER:${viewer.userId}`;
}
