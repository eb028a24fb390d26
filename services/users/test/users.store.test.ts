// The UserStore on every backend (embedded always, MongoDB when MONGO_URL is set): search by whole words, and every
// query it sends answered from an index, as the backend itself explains it.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DocumentDatabase } from '@ordergraph/store';
import { seedData } from '@ordergraph/seed';
import { recordingDatabase, storeBackends, unindexedQueries } from '@ordergraph/testkit';
import { seedUsers } from '../src/seed.js';
import { EmailTakenError, UserStore } from '../src/store/users.js';

describe.each(storeBackends())('UserStore ($name)', (backend) => {
  let db: DocumentDatabase;
  let store: UserStore;

  beforeEach(async () => {
    db = await backend.open();
    store = await UserStore.open(db);
  });

  afterEach(async () => {
    await db.close();
  });

  describe('search', () => {
    it('finds users holding every word of the query in their name or email, best first', async () => {
      await seedUsers(store);
      const hits = await store.search('Ada Lovelace', 20);
      expect(hits.map(({ doc }) => doc.name)).toEqual(seedData().users.filter((user) => user.name === 'Ada Lovelace').map((user) => user.name));
      expect(hits.every(({ score }) => score === 3)).toBe(true);
      expect((await store.search('user7@EXAMPLE.com', 20)).map(({ doc }) => doc.email)).toEqual(['user7@example.com']);
      expect((await store.search('lovelace', 50)).every(({ doc }) => doc.name?.includes('Lovelace'))).toBe(true);
      expect(await store.search('lovel', 20)).toEqual([]);
      expect(await store.search(' -- ', 20)).toEqual([]);
    });

    it('indexes the words of a created user, accents aside', async () => {
      const created = await store.create({ email: 'Zoe@Example.com', name: 'Zoë Ångström', role: 'USER' });
      expect(created.words).toEqual(['zoe', 'angstrom', 'example', 'com']);
      expect((await store.search('ANGSTROM zoe', 5)).map(({ doc }) => doc._id)).toEqual([created._id]);
      await expect(store.create({ email: 'zoe@example.com', name: 'Other', role: 'USER' })).rejects.toBeInstanceOf(EmailTakenError);
    });
  });

  it('gives users stored before search read words their words when it opens, reading the words index', async () => {
    const users = await db.collection('users', []);
    await users.insertOne({ _id: 'old-1', email: 'grace@example.com', name: 'Grace Hopper', nameLower: 'grace hopper', role: 'USER', createdAt: new Date(Date.UTC(2025, 0, 1)) });
    const recorded = recordingDatabase(db);
    const reopened = await UserStore.open(recorded.db);
    expect(await reopened.fillSearchWords()).toBe(1);
    expect((await reopened.search('hopper grace', 5)).map(({ doc }) => doc._id)).toEqual(['old-1']);
    expect(await unindexedQueries(recorded.queries)).toEqual([]);
  });

  describe('indexes', () => {
    it('answers every query it sends from an index (explained by the backend itself)', async () => {
      const recorded = recordingDatabase(db);
      const indexed = await UserStore.open(recorded.db);
      await seedUsers(indexed);
      const [, first] = seedData().users;
      const position = { createdAt: first!.createdAt, id: first!.localId };
      await indexed.findByIds(['user-0000', 'user-0005']);
      for (const filter of [undefined, { role: 'USER' as const }, { email: 'USER3@example.com' }, { createdAfter: first!.createdAt }, { role: 'USER' as const, createdAfter: first!.createdAt }]) {
        await indexed.list(filter, { limit: 20, offset: 40 });
        await indexed.count(filter);
        await indexed.page(filter, { first: 10, after: position });
        await indexed.page(filter, { last: 10, before: position });
        await indexed.page(filter, { first: 10 });
      }
      await indexed.search('Grace Hopper', 20);
      await indexed.search('user9@example.com', 20);
      expect(recorded.queries.length).toBeGreaterThan(20);
      expect(await unindexedQueries(recorded.queries)).toEqual([]);
    });
  });
});
