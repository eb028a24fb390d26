import { seedData } from '@ordergraph/seed';
import type { UserDoc, UserStore } from './store/users.js';

/** Seeds this subgraph's part of the shared deterministic data set; returns how many users were written. */
export function seedUsers(store: UserStore): Promise<number> {
  const docs: UserDoc[] = seedData().users.map((user) => ({
    _id: user.localId,
    email: user.email,
    name: user.name,
    nameLower: user.name.toLowerCase(),
    role: user.role,
    createdAt: user.createdAt,
  }));
  return store.seed(docs);
}
