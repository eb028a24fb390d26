import type { RequestIdentity, Viewer } from '@ordergraph/common';
import { createLoaders, type Loaders } from './loaders.js';
import type { SearchFanOut } from './peers/search.js';
import type { UserStore } from './store/users.js';

export interface Context {
  viewer: Viewer;
  /** The caller's Authorization header, forwarded when search asks the other subgraphs. */
  authorization: string | undefined;
  store: UserStore;
  loaders: Loaders;
  search: SearchFanOut;
}

export function contextFactory(store: UserStore, search: SearchFanOut) {
  return ({ viewer, authorization }: RequestIdentity): Context => ({
    viewer,
    authorization,
    store,
    loaders: createLoaders(store),
    search,
  });
}
