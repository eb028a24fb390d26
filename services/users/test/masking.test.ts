// An internal failure never leaks: the datastore breaking mid-request reaches the client as INTERNAL_SERVER_ERROR
// with the generic message, and the real cause goes to the log. MongoDB cannot run here, so a database whose
// queries fail the way a dropped MongoDB connection does stands in for it: the one boundary we do not run.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createLogger, toGlobalId } from '@ordergraph/core';
import { EmbeddedDatabase, type DocumentDatabase } from '@ordergraph/store';
import { type SubgraphService } from '@ordergraph/subgraph-kit';
import { graphql, token } from '@ordergraph/testkit';
import { loadUsersConfig } from '../src/config.js';
import { createUsersService } from '../src/server.js';

class BrokenDatabase extends EmbeddedDatabase implements DocumentDatabase {
  override async collection<T extends { _id: string } & Record<string, unknown>>(name: string, indexes: Parameters<EmbeddedDatabase['collection']>[1]) {
    const inner = await super.collection<T>(name, indexes);
    const fail = async (): Promise<never> => {
      throw new Error('MongoNetworkError: connection 4 to 10.0.3.7:27017 closed');
    };
    return Object.assign(Object.create(inner) as typeof inner, { find: fail, findOne: fail, count: fail });
  }
}

let service: SubgraphService;
let url: string;
beforeAll(async () => {
  service = await createUsersService(loadUsersConfig({ LOG_LEVEL: 'silent' }), createLogger('users', 'silent'), { database: new BrokenDatabase() });
  url = await service.listen(0, '127.0.0.1');
});
afterAll(() => service.stop());

it('masks a datastore failure as INTERNAL_SERVER_ERROR without detail', async () => {
  const id = toGlobalId('User', 'user-0001');
  const { status, body } = await graphql(url, 'query ($id: ID!) { user(id: $id) { id } }', { variables: { id }, token: await token('ADMIN', 'user-0000') });
  expect(status).toBe(200);
  expect(body).toEqual({
    data: { user: null },
    errors: [{ message: 'Internal server error', locations: [{ line: 1, column: 20 }], path: ['user'], extensions: { code: 'INTERNAL_SERVER_ERROR' } }],
  });
  expect(JSON.stringify(body)).not.toMatch(/Mongo|10\.0\.3\.7|stack/);
});
