import DataLoader from 'dataloader';
import type { UserStore, UserDoc } from './store/users.js';

/** One DataLoader per entity, built per request; keys are local ids. */
export function createLoaders(store: UserStore) {
  return {
    user: new DataLoader<string, UserDoc | null>((ids) => store.findByIds(ids)),
  };
}

export type Loaders = ReturnType<typeof createLoaders>;
