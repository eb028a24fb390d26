import type { RequestIdentity, Viewer } from '@ordergraph/core';
import type { UserDomain } from './domain/users.js';
import { createLoaders, type Loaders } from './loaders.js';
import type { UserStore } from './store/users.js';

export interface Context {
  viewer: Viewer;
  /** The caller's Authorization header, forwarded when search and node(id) ask the other subgraphs. */
  authorization: string | undefined;
  /** Reads of one entity by ID go through these, so a batch of N users costs one store query. */
  loaders: Loaders;
  /** Reads of lists. */
  store: UserStore;
  /** Writes, and anything else with a rule. */
  users: UserDomain;
}

export function contextFactory(store: UserStore, users: UserDomain) {
  return ({ viewer, authorization }: RequestIdentity): Context => ({ viewer, authorization, loaders: createLoaders(store), store, users });
}
