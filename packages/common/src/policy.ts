// The authorization vocabulary resolvers use (DESIGN section 4). Subgraphs decide; the gateway only authenticates.
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
