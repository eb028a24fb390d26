// Every row of the spec's Versioning table, the deprecation-before-removal rule, and the check and report around them,
// on a small Federation 2 subgraph schema.
import { describe, expect, it } from 'vitest';
import { VERSIONING_TABLE, checkSubgraphs, classifyChanges, formatReport, subgraphSchema } from '../src/index.js';

const BASELINE = `
extend schema @link(url: "https://specs.apollo.dev/federation/v2.7", import: ["@key"])

enum OrderStatus { PENDING SHIPPED RETURNED @deprecated(reason: "no longer used") }

type Order @key(fields: "id") {
  id: ID!
  status: OrderStatus!
  total: Float!
  note: String
  legacyNote: String @deprecated(reason: "use note")
}

input OrderFilter { status: OrderStatus, legacyStatus: String @deprecated(reason: "use status") }

type Query {
  order(id: ID!): Order
  orders(limit: Int, filter: OrderFilter): [Order!]!
}
`;

/** Applies one textual edit to the baseline, failing loudly if the edit does not apply. */
function edit(from: string, to: string, sdl = BASELINE): string {
  expect(sdl).toContain(from);
  return sdl.replace(from, to);
}

const classify = async (baseline: string, proposed: string) =>
  (await classifyChanges(subgraphSchema(baseline), subgraphSchema(proposed))).map(({ kind, impact, path }) => ({ kind, impact, path }));

describe('the Versioning table, row by row', () => {
  it.each([
    ['Add field', edit('  note: String\n', '  note: String\n  placedAt: String\n'), 'Order.placedAt'],
    ['Add nullable argument', edit('orders(limit: Int,', 'orders(limit: Int, offset: Int,'), 'Query.orders.offset'],
    ['Deprecate field', edit('  note: String\n', '  note: String @deprecated(reason: "use notes")\n'), 'Order.note.@deprecated'],
    ['Add enum value', edit('PENDING SHIPPED', 'PENDING SHIPPED CANCELLED'), 'OrderStatus.CANCELLED'],
    ['Remove field', edit('  note: String\n', ''), 'Order.note'],
    ['Rename field', edit('  total: Float!\n', '  amount: Float!\n'), 'Order.total'],
    ['Change field type', edit('  total: Float!\n', '  total: String!\n'), 'Order.total'],
    ['Add non-null argument', edit('orders(limit: Int,', 'orders(limit: Int, region: String!,'), 'Query.orders.region'],
    ['Remove enum value', edit('PENDING SHIPPED', 'PENDING'), 'OrderStatus.SHIPPED'],
  ] as const)('%s', async (row, proposed, path) => {
    expect(await classify(BASELINE, proposed)).toEqual([{ kind: row, impact: VERSIONING_TABLE[row], path }]);
  });

  it('gives the impacts the spec gives', () => {
    expect(Object.entries(VERSIONING_TABLE).filter(([, impact]) => impact === 'non-breaking').map(([row]) => row)).toEqual([
      'Add field',
      'Add nullable argument',
      'Deprecate field',
      'Add enum value',
    ]);
    expect(Object.entries(VERSIONING_TABLE).filter(([, impact]) => impact === 'breaking').map(([row]) => row)).toEqual([
      'Remove field',
      'Rename field',
      'Change field type',
      'Add non-null argument',
      'Remove enum value',
    ]);
  });

  it('counts a type change as breaking even when it looks harmless to clients, as the table does', async () => {
    const [change] = await classifyChanges(subgraphSchema(BASELINE), subgraphSchema(edit('  note: String\n', '  note: String!\n')));
    expect(change).toMatchObject({ kind: 'Change field type', impact: 'breaking', hint: expect.stringContaining('the table counts every type change') });
  });
});

describe('deprecated for a release before removal', () => {
  it('a breaking change stays breaking when the same edit adds a description to the field or its type', async () => {
    // graphql-inspector's simplifyChanges rule alone folds both into the description added.
    expect(await classify(BASELINE, edit('  note: String\n', '  "Why."\n  note: Int\n'))).toEqual([
      { kind: 'Field description added', impact: 'non-breaking', path: 'Order.note' },
      { kind: 'Change field type', impact: 'breaking', path: 'Order.note' },
    ]);
    const removal = await classify(BASELINE, edit('type Order @key', '"An order."\ntype Order @key', edit('  note: String\n', '')));
    expect(removal.filter((change) => change.impact === 'breaking')).toEqual([{ kind: 'Remove field', impact: 'breaking', path: 'Order.note' }]);
  });

  it('removing a field deprecated in the baseline passes', async () => {
    expect(await classify(BASELINE, edit('  legacyNote: String @deprecated(reason: "use note")\n', ''))).toEqual([
      { kind: 'Remove deprecated field', impact: 'non-breaking', path: 'Order.legacyNote' },
    ]);
  });

  it('deprecating and removing in the same change is breaking: no release told clients to migrate', async () => {
    // The proposal removes `note`, which the baseline (the last release) still serves undeprecated.
    expect(await classify(BASELINE, edit('  note: String\n', ''))).toEqual([{ kind: 'Remove field', impact: 'breaking', path: 'Order.note' }]);
  });

  it('deprecate, publish, then remove: each step passes', async () => {
    const release2 = edit('  note: String\n', '  note: String @deprecated(reason: "use notes")\n  notes: [String!]\n');
    expect((await classify(BASELINE, release2)).every((change) => change.impact === 'non-breaking')).toBe(true);
    const release3 = edit('  note: String @deprecated(reason: "use notes")\n', '', release2);
    expect(await classify(release2, release3)).toEqual([{ kind: 'Remove deprecated field', impact: 'non-breaking', path: 'Order.note' }]);
  });

  it('applies to enum values and input fields deprecated in the baseline too', async () => {
    expect(await classify(BASELINE, edit(' RETURNED @deprecated(reason: "no longer used")', ''))).toEqual([
      { kind: 'Remove deprecated enum value', impact: 'non-breaking', path: 'OrderStatus.RETURNED' },
    ]);
    const [inputField] = await classify(BASELINE, edit(', legacyStatus: String @deprecated(reason: "use status")', ''));
    expect(inputField).toMatchObject({ path: 'OrderFilter.legacyStatus', impact: 'non-breaking' });
  });

  it('a rename away from a deprecated field is a removal of a deprecated field and an addition', async () => {
    expect(await classify(BASELINE, edit('  legacyNote: String @deprecated(reason: "use note")\n', '  memo: String\n'))).toEqual([
      { kind: 'Remove deprecated field', impact: 'non-breaking', path: 'Order.legacyNote' },
      { kind: 'Add field', impact: 'non-breaking', path: 'Order.memo' },
    ]);
  });
});

describe('the check', () => {
  it('leaves federation machinery out: a new entity is a type and a field added, not a change to _Entity', async () => {
    const proposed = edit('type Query {\n', 'type Invoice @key(fields: "id") { id: ID! }\n\ntype Query {\n  invoice(id: ID!): Invoice\n');
    const changes = await classify(BASELINE, proposed);
    expect(changes.map((change) => change.path).sort()).toEqual(['Invoice', 'Query.invoice']);
    expect(changes.every((change) => change.impact === 'non-breaking')).toBe(true);
  });

  it('reports a new subgraph, a removed one, and composition failures', async () => {
    const subgraph = (name: string, typeDefs: string) => ({ name, url: `http://${name}.test/graphql`, schemaPath: `${name}.graphql`, typeDefs });
    const clash = `extend schema @link(url: "https://specs.apollo.dev/federation/v2.7", import: ["@key"])
      type Order @key(fields: "id") { id: ID! total: String! }`;
    const result = await checkSubgraphs([subgraph('orders', BASELINE), subgraph('billing', clash)], { orders: BASELINE, shipping: BASELINE });
    expect(result.comparisons.map(({ name, hasBaseline, changes }) => ({ name, hasBaseline, kinds: changes.map((change) => change.kind) }))).toEqual([
      { name: 'orders', hasBaseline: true, kinds: [] },
      { name: 'billing', hasBaseline: false, kinds: [] },
      { name: 'shipping', hasBaseline: true, kinds: ['Remove subgraph'] },
    ]);
    expect(result.breaking).toBe(1);
    expect(result.compositionErrors.join('\n')).toMatch(/Order\.total/);
  });

  it('writes a readable report with the row, the coordinate and what to do instead', async () => {
    const proposed = edit('  note: String\n', '  placedAt: Int\n');
    const result = await checkSubgraphs([{ name: 'orders', url: 'http://orders.test/graphql', schemaPath: 'orders.graphql', typeDefs: proposed }], { orders: BASELINE });
    const report = formatReport(result, 'the baseline in schemas/baseline');
    expect(report).toContain('orders: 2 changes, 1 breaking');
    // One table row per change: schema, impact, kind, coordinate, details (the hint wraps onto the next lines).
    expect(report).toMatch(/│ Schema\s+│ Impact\s+│ Change\s+│ Where\s+│ Details\s+│/);
    expect(report).toMatch(/│ orders\s+│ BREAKING\s+│ Remove field\s+│ Order\.note\s+│ Field 'note' was removed from object type 'Order'\s+│/);
    expect(report).toMatch(/│ → mark it @deprecated\(reason: "\.\.\."\) and publish that release first;\s+│\n.*│ remove it in a later release\s+│/);
    expect(report).toMatch(/│ orders\s+│ ok\s+│ Add field\s+│ Order\.placedAt\s+│/);
    expect(report.trimEnd().split('\n').at(-1)).toBe('FAILED (exit 1): 1 breaking change. Breaking changes block deployment.');
  });
});
