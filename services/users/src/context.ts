import type { RequestIdentity, Viewer } from '@ordergraph/core';
import { createLoaders, type Loaders } from './loaders.js';
import type { NodeOwners } from './peers/nodes.js';
import type { SearchFanOut } from './peers/search.js';
import type { UserStore } from './store/users.js';

export interface Context {
  viewer: Viewer;
  /** The caller's Authorization header, forwarded when search and node(id) ask the other subgraphs. */
  authorization: string | undefined;
  store: UserStore;
  loaders: Loaders;
  search: SearchFanOut;
  nodes: NodeOwners;
}

export function contextFactory(store: UserStore, search: SearchFanOut, nodes: NodeOwners) {
  return ({ viewer, authorization }: RequestIdentity): Context => ({
    viewer,
    authorization,
    store,
    loaders: createLoaders(store),
    search,
    nodes,
  });
}
