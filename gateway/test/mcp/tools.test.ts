// The manifest's entries as tools: which are offered and why not, their descriptions, and what each asks of a caller
// (@authenticated and @requiresScopes on its fields and their types, fragments included), decided as the gateway's
// authorization decides a field.
import { buildSchema, getOperationAST, parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { parseManifest, type ManifestEntry } from '../../src/persisted-queries/manifest.js';
import { allows, describeRequirements, documentRequirements } from '../../src/mcp/requirements.js';
import { buildTools, toolsCache } from '../../src/mcp/tools.js';

const schema = buildSchema(`
  directive @authenticated on FIELD_DEFINITION | OBJECT | INTERFACE
  directive @requiresScopes(scopes: [[String!]!]!) on FIELD_DEFINITION | OBJECT | INTERFACE
  type Product { id: ID!, name: String!, cost: Float @requiresScopes(scopes: [["admin"], ["finance", "user"]]) }
  type Order @authenticated { id: ID!, total: Float! }
  type User { id: ID!, email: String! @requiresScopes(scopes: [["user"]]), orders: [Order!]! }
  union Hit = Product | Order
  type Query {
    product(id: ID!): Product
    me: User @authenticated
    users: [User!]! @requiresScopes(scopes: [["admin"]])
    search: [Hit!]!
  }
  type Mutation { rename(id: ID!, name: String!): Product @requiresScopes(scopes: [["admin"]]) }
  type Subscription { orders: Order }
`);

const requirementsOf = (body: string, name?: string) => {
  const document = parse(body);
  return documentRequirements(schema, document, getOperationAST(document, name)!);
};

const USER = { userId: 'u1', role: 'USER' as const };
const ADMIN = { userId: 'u0', role: 'ADMIN' as const };

describe("a trusted document's requirements", () => {
  it('are none for fields without directives', () => {
    expect(requirementsOf('{ product(id: "1") { id name } search { __typename } }')).toEqual([]);
  });

  it("come from a field's directives and its parent type's, each distinct requirement once", () => {
    expect(requirementsOf('{ me { id email orders { id total } } }')).toEqual([
      { authenticated: true, scopes: [] },
      { authenticated: false, scopes: [['user']] },
    ]);
    expect(requirementsOf('{ product(id: "1") { cost } }')).toEqual([{ authenticated: false, scopes: [['admin'], ['finance', 'user']] }]);
  });

  it('count the fields of fragments the operation spreads, inline or named, however deep, and only those', () => {
    const body = `
      query A { ...Root }
      query B { product(id: "1") { id } }
      fragment Root on Query { search { ... on Order { id } } ...Users }
      fragment Users on Query { users { id } }
      fragment Unused on Query { me { id } }`;
    expect(requirementsOf(body, 'A')).toEqual([{ authenticated: true, scopes: [] }, { authenticated: false, scopes: [['admin']] }]);
    expect(requirementsOf(body, 'B')).toEqual([]);
  });

  it('let through a caller who meets every one: signed in, and all the scopes of one set of each', () => {
    const orders = requirementsOf('{ me { orders { id } } }');
    expect([allows(null, orders), allows(USER, orders), allows(ADMIN, orders)]).toEqual([false, true, true]);
    const users = requirementsOf('{ users { id email } }');
    expect([allows(null, users), allows(USER, users), allows(ADMIN, users)]).toEqual([false, false, true]);
    // ADMIN holds `admin`; USER holds `user` alone, not `finance` too.
    const cost = requirementsOf('{ product(id: "1") { cost } }');
    expect([allows(USER, cost), allows(ADMIN, cost)]).toEqual([false, true]);
    expect(describeRequirements(cost)).toBe('scopes admin or finance+user');
    expect(describeRequirements(requirementsOf('{ me { id } users { id } }'))).toBe('a signed-in caller, scopes admin');
  });
});

const entry = (id: string, body: string, extra: Partial<ManifestEntry> = {}): ManifestEntry => ({ id, body, ...extra });
const manifestOf = (...entries: ManifestEntry[]) =>
  parseManifest(JSON.stringify({ format: 'apollo-persisted-query-manifest', version: 1, operations: entries }));

describe('the tools of a manifest', () => {
  it('are its named queries and mutations, described by the entry, else by the comment above the operation', () => {
    const { tools, skipped } = buildTools(
      manifestOf(
        entry('1', '# One product.\n# By its global ID.\nquery Product($id: ID!) { product(id: $id) { id name } }'),
        entry('2', '# Not this one.\nmutation Rename($id: ID!, $name: String!) { rename(id: $id, name: $name) { id } }', { description: 'Renames a product.' }),
        entry('3', 'query Me { me { id } }'),
      ),
      schema,
    );
    expect(skipped).toEqual([]);
    expect([...tools.values()].map(({ name, id, type, description }) => ({ name, id, type, description }))).toEqual([
      { name: 'Product', id: '1', type: 'query', description: 'One product.\nBy its global ID.' },
      { name: 'Rename', id: '2', type: 'mutation', description: 'Renames a product.' },
      { name: 'Me', id: '3', type: 'query', description: 'The trusted query Me.' },
    ]);
    expect(tools.get('Rename')!.requirements).toEqual([{ authenticated: false, scopes: [['admin']] }]);
    expect(tools.get('Rename')!.inputSchema.required).toEqual(['id', 'name']);
  });

  it('leave out, with a reason, what cannot be a tool', () => {
    const { tools, skipped } = buildTools(
      manifestOf(
        entry('sub', 'subscription Orders { orders { id } }'),
        entry('anonymous', '{ product(id: "1") { id } }'),
        entry('stale', 'query Stale { product(id: "1") { gone } }'),
        entry('two', 'query A { me { id } } query B { users { id } }'),
        entry('named', 'query A { me { id } } query B { users { id } }', { name: 'B' }),
        entry('again', 'query B { product(id: "1") { id } }'),
        entry('same', 'query A { me { id } } query B { users { id } }', { name: 'B' }),
      ),
      schema,
    );
    expect([...tools.keys()]).toEqual(['B']);
    expect(tools.get('B')!.id).toBe('named');
    expect(skipped).toEqual([
      { id: 'sub', reason: 'a subscription is not offered as a tool (a call has one answer)' },
      { id: 'anonymous', reason: 'the operation has no name' },
      { id: 'stale', reason: expect.stringContaining('it does not fit the schema being served: Cannot query field "gone"') },
      { id: 'two', reason: 'the body has several operations and the entry names none' },
      // A second body under the same name is not offered; the same body under another id is the same tool.
      { id: 'again', reason: 'another entry already offers B' },
    ]);
  });

  it('are built once per manifest and schema, and again when either is replaced', () => {
    let builds = 0;
    const toolsOf = toolsCache(() => builds++);
    const first = manifestOf(entry('1', 'query Me { me { id } }'));
    const other = buildSchema('type Query { me: String }');
    expect(toolsOf(first, schema)).toBe(toolsOf(first, schema));
    expect(builds).toBe(1);
    expect(toolsOf(first, other).skipped).toHaveLength(1);
    expect(toolsOf(manifestOf(entry('1', 'query Me { me { id } }')), schema).tools.has('Me')).toBe(true);
    expect(builds).toBe(3);
  });
});
