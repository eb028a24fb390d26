// The current incremental delivery format (incrementalSpec=v0.2) rewritten from what graphql-tools' executor yields:
// the parts here are the executor's own, on a schema of this test's, so the rewriting meets the shapes it gets in the
// gateway; each answer, put back together as a client does, must equal the same operation answered whole.
import { describe, expect, it } from 'vitest';
import { normalizedExecutor } from '@graphql-tools/executor';
import { makeExecutableSchema } from '@graphql-tools/schema';
import { GraphQLDeferDirective, GraphQLStreamDirective } from '@graphql-tools/utils';
import { GraphQLSchema, parse, visit, type DocumentNode } from 'graphql';
import { acceptedIncrementalFormat, toCurrentFormat, type CurrentPart, type LegacyPart } from '../../src/execution/incremental-format.js';

const executable = makeExecutableSchema({
  typeDefs: /* GraphQL */ `
    interface Node {
      id: ID!
    }
    type Shelf implements Node {
      id: ID!
      name: String!
      books: [Book!]!
      broken: String!
    }
    type Book implements Node {
      id: ID!
      title: String!
      pages: Int
    }
    union Thing = Shelf | Book
    type Query {
      shelf: Shelf
      shelves: [Shelf!]!
      node(id: ID!): Node
      things: [Thing!]!
    }
  `,
  resolvers: {
    Query: {
      shelf: () => shelves[0],
      shelves: () => shelves,
      node: (_: unknown, { id }: { id: string }) => [...shelves, ...shelves.flatMap((shelf) => shelf.books)].find((node) => node.id === id) ?? null,
      things: () => [shelves[1], shelves[0]!.books[0]],
    },
    Node: { __resolveType: (node: { title?: string }) => (node.title ? 'Book' : 'Shelf') },
    Thing: { __resolveType: (node: { title?: string }) => (node.title ? 'Book' : 'Shelf') },
    Shelf: {
      broken: () => {
        throw new Error('the shelf gave way');
      },
    },
  },
});
const schema = new GraphQLSchema({ ...executable.toConfig(), directives: [...executable.getDirectives(), GraphQLDeferDirective, GraphQLStreamDirective] });
const book = (id: number) => ({ id: `b${id}`, title: `Book ${id}`, pages: id * 10 });
const shelves = [
  { id: 's1', name: 'Fiction', books: [book(1), book(2), book(3)] },
  { id: 's2', name: 'Poetry', books: [book(4)] },
];

async function parts(query: string, variables: Record<string, unknown> = {}): Promise<CurrentPart[]> {
  const document = parse(query);
  const result = await normalizedExecutor({ schema, document, variableValues: variables });
  if (!(Symbol.asyncIterator in result)) throw new Error(`answered whole: ${JSON.stringify(result)}`);
  const out: CurrentPart[] = [];
  for await (const part of toCurrentFormat(result as AsyncIterable<LegacyPart>, { schema, document, variables })) out.push(JSON.parse(JSON.stringify(part)));
  return out;
}

/** The same operation answered at once: its @defer and @stream taken out. */
async function whole(query: string, variables: Record<string, unknown> = {}): Promise<unknown> {
  const document: DocumentNode = visit(parse(query), { Directive: (node) => (['defer', 'stream'].includes(node.name.value) ? null : undefined) });
  const result = await normalizedExecutor({ schema, document, variableValues: variables });
  return JSON.parse(JSON.stringify(result));
}

/**
 * Puts an answer back together as a client of the format does, checking the format's rules on the way: an id is
 * pending before its data comes, delivered only while pending, and completed once.
 */
function assemble(answer: CurrentPart[]): { data: unknown; errors: unknown[] } {
  const pending = new Map<string, (string | number)[]>();
  const completed = new Set<string>();
  const errors: unknown[] = [...(answer[0]!.errors ?? [])];
  const data = structuredClone(answer[0]!.data) as Record<string, unknown>;
  const at = (path: readonly (string | number)[]) => path.reduce<any>((value, key) => value[key], data);
  answer.forEach((part, index) => {
    expect(part.hasNext).toBe(index < answer.length - 1);
    for (const { id, path } of part.pending ?? []) {
      expect(pending.has(id) || completed.has(id), `id ${id} announced twice`).toBe(false);
      pending.set(id, path as (string | number)[]);
    }
    for (const entry of part.incremental ?? []) {
      const path = pending.get(entry.id);
      expect(path, `id ${entry.id} delivered while not pending`).toBeDefined();
      if ('items' in entry) at(path!).push(...structuredClone(entry.items));
      else Object.assign(at(path!), structuredClone(entry.data));
      errors.push(...(entry.errors ?? []));
    }
    for (const { id, errors: failed } of part.completed ?? []) {
      expect(pending.has(id), `id ${id} completed while not pending`).toBe(true);
      pending.delete(id);
      completed.add(id);
      errors.push(...(failed ?? []));
    }
  });
  expect([...pending.keys()], 'ids never completed').toEqual([]);
  return { data, errors };
}

describe('acceptedIncrementalFormat', () => {
  it.each([
    ['multipart/mixed;incrementalSpec=v0.2', 'v0.2'],
    // What Apollo Client 4's GraphQL17Alpha9Handler sends.
    ['multipart/mixed;incrementalSpec=v0.2,application/graphql-response+json,application/json;q=0.9', 'v0.2'],
    ['multipart/mixed; incrementalSpec="v0.2"', 'v0.2'],
    ['multipart/mixed;deferSpec=20220824,application/graphql-response+json,application/json;q=0.9', '20220824'],
    ['multipart/mixed;deferSpec=20220824;q=0.5, multipart/mixed;incrementalSpec=v0.2', 'v0.2'],
    ['multipart/mixed;incrementalSpec=v0.2, multipart/mixed;deferSpec=20220824', 'v0.2'],
    ['multipart/mixed;deferSpec=20220824, multipart/mixed;incrementalSpec=v0.2', '20220824'],
    ['application/json, multipart/mixed', '20220824'],
    ['text/event-stream', '20220824'],
  ])('%s: %s', (accept, format) => expect(acceptedIncrementalFormat(accept)).toBe(format));

  it.each(['application/json', 'multipart/mixed;incrementalSpec=v0.3', 'multipart/mixed;boundary="graphql";subscriptionSpec=1.0', 'multipart/mixed;incrementalSpec=v0.2;q=0', '*/*', ''])(
    'takes none from %j',
    (accept) => expect(acceptedIncrementalFormat(accept)).toBeUndefined(),
  );
});

describe('toCurrentFormat', () => {
  it('announces each deferred fragment in the part that delivers its object, delivers it by id and completes it', async () => {
    const query = '{ shelf { id ... @defer(label: "more") { name books { id ... @defer(label: "title") { title } } } } }';
    const answer = await parts(query);
    expect(answer[0]).toEqual({ data: { shelf: { id: 's1' } }, pending: [{ id: '0', path: ['shelf'], label: 'more' }], hasNext: true });
    const rest = answer.slice(1);
    // The nested fragments are announced with the part that delivers the books they belong to.
    const withBooks = rest.find((part) => part.incremental?.some((entry) => entry.id === '0'))!;
    expect(withBooks.completed).toContainEqual({ id: '0' });
    expect(withBooks.pending).toEqual([0, 1, 2].map((index) => ({ id: String(index + 1), path: ['shelf', 'books', index], label: 'title' })));
    expect(assemble(answer)).toEqual({ data: (await whole(query) as { data: unknown }).data, errors: [] });
  });

  it('announces a streamed list, delivers its items by id, and completes it with the last part', async () => {
    const query = '{ shelves { name books @stream(initialCount: 1) { id ... @defer { pages } } } }';
    const answer = await parts(query);
    expect(answer[0]!.data).toEqual({ shelves: [{ name: 'Fiction', books: [{ id: 'b1' }] }, { name: 'Poetry', books: [{ id: 'b4' }] }] });
    // Fiction's list may stream more; Poetry's list has its one item and so may too (its length is its initial count).
    expect(answer[0]!.pending).toEqual(
      expect.arrayContaining([
        { id: expect.any(String), path: ['shelves', 0, 'books'] },
        { id: expect.any(String), path: ['shelves', 0, 'books', 0] },
        { id: expect.any(String), path: ['shelves', 1, 'books'] },
      ]),
    );
    expect(assemble(answer)).toEqual({ data: (await whole(query) as { data: unknown }).data, errors: [] });
  });

  it('announces nothing for a list already whole at its initial count, nor for @defer(if: false)', async () => {
    const query = 'query ($later: Boolean!) { shelves { books @stream(initialCount: 5) { id } } shelf { id ... @defer(if: $later) { name } ... @defer { books { id } } } }';
    const answer = await parts(query, { later: false });
    expect(answer[0]!.pending).toEqual([{ id: '0', path: ['shelf'] }]);
    expect(assemble(answer)).toEqual({ data: (await whole(query, { later: false }) as { data: unknown }).data, errors: [] });
  });

  it('follows fragments through abstract types: by __typename when selected, else announced with their data', async () => {
    const typed = '{ node(id: "b2") { __typename id ... on Book @defer(label: "b") { title } ... on Shelf @defer(label: "s") { name } } }';
    const typedAnswer = await parts(typed);
    expect(typedAnswer[0]!.pending).toEqual([{ id: '0', path: ['node'], label: 'b' }]);
    expect(assemble(typedAnswer)).toEqual({ data: (await whole(typed) as { data: unknown }).data, errors: [] });

    const untyped = '{ things { ... on Book @defer(label: "b") { title } ...ShelfName @defer(label: "s") } } fragment ShelfName on Shelf { name }';
    const untypedAnswer = await parts(untyped);
    expect(untypedAnswer[0]).toEqual({ data: { things: [{}, {}] }, hasNext: true });
    expect(untypedAnswer.slice(1).flatMap((part) => part.pending ?? [])).toEqual(
      expect.arrayContaining([
        { id: expect.any(String), path: ['things', 0], label: 's' },
        { id: expect.any(String), path: ['things', 1], label: 'b' },
      ]),
    );
    expect(assemble(untypedAnswer)).toEqual({ data: (await whole(untyped) as { data: unknown }).data, errors: [] });
  });

  it('completes a deferred fragment that failed with its errors, and carries field errors with the data they belong to', async () => {
    const failed = await parts('{ shelf { id ... @defer(label: "broken") { broken } } }');
    expect(failed.at(-1)).toEqual({
      completed: [{ id: '0', errors: [expect.objectContaining({ message: 'the shelf gave way', path: ['shelf', 'broken'] })] }],
      hasNext: false,
    });
    expect(failed.flatMap((part) => part.incremental ?? [])).toEqual([]);
  });

  it('follows the operation executed when the document names several', async () => {
    const query = 'query Other { shelves { id } } query Mine { shelf { ...Late @defer } } fragment Late on Shelf { name }';
    const document = parse(query);
    const result = await normalizedExecutor({ schema, document, operationName: 'Mine' });
    const answer: CurrentPart[] = [];
    for await (const part of toCurrentFormat(result as AsyncIterable<LegacyPart>, { schema, document, operationName: 'Mine' })) answer.push(part);
    expect(answer[0]).toEqual({ data: { shelf: {} }, pending: [{ id: '0', path: ['shelf'] }], hasNext: true });
  });
});
