// Which clients a breaking change affects: read from a manifest's `clientName` or from a folder per client, and named
// for each breaking change by the operations that use what it breaks.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildSchema, parse } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkOperations, classifyChanges, readClientOperations, readOperations, type KnownOperation } from '../src/index.js';

const DEPLOYED = buildSchema('type Query { products: [Product!]! } type Product { id: ID! name: String! description: String price: Float! }');
const PROPOSED = buildSchema('type Query { products: [Product!]! } type Product { id: ID! name: String! price: String! }');

const known = (name: string, body: string, clients: string[]): KnownOperation => ({ id: name, name, document: parse(body), clients });

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'ordergraph-operations-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('checkOperations', () => {
  it('names, for each breaking change, the clients whose operations use what it breaks', async () => {
    const changes = await classifyChanges(DEPLOYED, PROPOSED);
    const result = checkOperations(
      [
        known('Described', 'query Described { products { id description } }', ['web']),
        known('Priced', 'query Priced { products { price } }', ['ios', 'web']),
        known('PricedToo', 'query PricedToo { products { id price } }', []),
        known('Named', 'query Named { products { name } }', ['android']),
      ],
      PROPOSED,
      DEPLOYED,
      changes,
    );
    const byPath = Object.fromEntries(result.affected.map(({ change, clients, operations, unnamed }) => [change.path, { clients, operations, unnamed }]));
    expect(byPath['Product.description']).toEqual({ clients: ['web'], operations: 1, unnamed: 0 });
    expect(byPath['Product.price']).toEqual({ clients: ['ios', 'web'], operations: 2, unnamed: 1 });
    // android's operation uses nothing that breaks.
    expect(result.broken.map(({ name, clients }) => [name, clients])).toEqual([['Described', ['web']], ['Priced', ['ios', 'web']], ['PricedToo', []]]);
  });

  it('names no change when the deployed schema is unknown (usage cannot be read)', async () => {
    const result = checkOperations([known('Described', 'query Described { products { description } }', ['web'])], PROPOSED, undefined, await classifyChanges(DEPLOYED, PROPOSED));
    expect(result.affected).toEqual([]);
    expect(result.broken[0]?.clients).toEqual(['web']);
  });
});

describe('reading clients', () => {
  it("takes a manifest entry's clientName, one operation for the entries of one id", () => {
    const path = join(dir, 'manifest.json');
    const body = 'query Names { products { name } }';
    writeFileSync(
      path,
      JSON.stringify({
        format: 'apollo-persisted-query-manifest',
        version: 1,
        operations: [
          { id: 'names', name: 'Names', body, clientName: 'web' },
          { id: 'names', name: 'Names', body, clientName: 'ios' },
          { id: 'ids', name: 'Ids', body: 'query Ids { products { id } }' },
        ],
      }),
    );
    expect(readOperations(path).map(({ id, clients }) => [id, clients])).toEqual([['names', ['web', 'ios']], ['ids', []]]);
  });

  it('takes each folder (or manifest) of a folder per client as that client, the same operation name allowed in two', () => {
    const root = join(dir, 'clients');
    for (const client of ['ios', 'web']) {
      mkdirSync(join(root, client, 'screens'), { recursive: true });
      writeFileSync(join(root, client, 'screens', 'me.graphql'), `query Products { products { id } }`);
    }
    writeFileSync(join(root, 'partner.json'), JSON.stringify({ format: 'apollo-persisted-query-manifest', version: 1, operations: [{ id: 'p', name: 'P', body: 'query P { products { price } }' }] }));
    expect(readClientOperations(root).map(({ name, clients }) => [name, clients])).toEqual([['Products', ['ios']], ['P', ['partner']], ['Products', ['web']]]);
    expect(() => readClientOperations(join(dir, 'nowhere'))).toThrow(/is not a folder/);
  });
});
