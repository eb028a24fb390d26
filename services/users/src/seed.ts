import { batches, seedUsers as seededUsers } from '@ordergraph/seed';
import { searchWords } from '@ordergraph/subgraph-kit';
import type { UserDoc, UserStore } from './store/users.js';

/**
 * Seeds this subgraph's part of the shared deterministic data set at `scale` (SEED_SCALE), generated batch by batch;
 * returns how many users were written.
 */
export function seedUsers(store: UserStore, scale = 1): Promise<number> {
  const docs = (function* (): Generator<UserDoc> {
    for (const user of seededUsers(scale)) {
      yield {
        _id: user.localId,
        email: user.email,
        name: user.name,
        words: searchWords(user.name, user.email),
        role: user.role,
        createdAt: user.createdAt,
      };
    }
  })();
  return store.seed(batches(docs));
}
