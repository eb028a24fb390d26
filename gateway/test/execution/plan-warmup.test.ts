// What the warm-up of a reloaded supergraph picks and how it stops: the operations counted (bounded, by use), and the
// warm-up's own outcome for valid, invalid, refused and late operations. The planner is a function here; the Rust
// planner's warm-up is end to end in e2e/warm-reload.test.ts.
import { buildSchema, parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { OperationUsage, warmPlans } from '../../src/execution/plan-warmup.js';

const schema = buildSchema('type Query { a: Int b: Int }');

describe('OperationUsage', () => {
  it('ranks operations by use, a document and its operation name together, the same text parsed again as one', () => {
    const usage = new OperationUsage(10);
    const both = parse('query A { a } query B { b }');
    for (let i = 0; i < 3; i++) usage.record(both, 'A');
    usage.record(both, 'B');
    // The same text, parsed again (a parse cache that evicted it): the same operation, on its newest document object.
    const again = parse('query A { a } query B { b }');
    usage.record(again, 'B');
    usage.record(again, 'B');
    usage.record(again, 'B');
    const top = usage.top(5);
    expect(top.map((operation) => [operation.operationName, operation.uses])).toEqual([
      ['B', 4],
      ['A', 3],
    ]);
    expect(top[0]!.document).toBe(again);
  });

  it('keeps the operations in use through a flood of documents used once', () => {
    const usage = new OperationUsage(10);
    const used = parse('{ a }');
    for (let i = 0; i < 5; i++) usage.record(used, undefined);
    for (let i = 0; i < 1_000; i++) usage.record(parse(`{ a${i}: a }`), undefined);
    expect(usage.top(1)[0]!.document).toBe(used);
    expect(usage.top(1_000).length).toBeLessThanOrEqual(20);
    // Used again after the flood: counted on, not started again.
    usage.record(used, undefined);
    expect(usage.top(1)[0]!.uses).toBe(6);
  });

  it('halves the counts at each reload, so that what is used now overtakes what was used before', () => {
    const usage = new OperationUsage(10);
    const before = parse('{ a }');
    const now = parse('{ b }');
    for (let i = 0; i < 8; i++) usage.record(before, undefined);
    usage.age();
    usage.age();
    for (let i = 0; i < 3; i++) usage.record(now, undefined);
    expect(usage.top(1)[0]!.document).toBe(now);
  });
});

describe('warmPlans', () => {
  it('plans the valid operations, skips those the schema no longer validates, counts those the planner refuses', async () => {
    const planned: string[] = [];
    const outcome = await warmPlans(
      [
        { document: parse('query A { a }'), operationName: 'A' },
        { document: parse('query Gone { c }'), operationName: 'Gone' },
        { document: parse('query Refused { b }'), operationName: 'Refused' },
      ],
      schema,
      async (_document, operationName) => {
        if (operationName === 'Refused') throw new Error('no plan');
        planned.push(operationName!);
      },
      60_000,
    );
    expect(planned).toEqual(['A']);
    expect(outcome).toMatchObject({ planned: 1, invalid: 1, failed: 1, unfinished: 0 });
  });

  it('returns at its time bound, with the operations it did not finish counted', async () => {
    const never = new Promise<void>(() => {});
    const operations = Array.from({ length: 10 }, (_, i) => ({ document: parse(`query Q${i} { a }`), operationName: `Q${i}` }));
    const outcome = await warmPlans(operations, schema, () => never, 50);
    expect(outcome).toMatchObject({ planned: 0, invalid: 0, failed: 0, unfinished: 10 });
  });
});
