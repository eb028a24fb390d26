// The foreign supergraphs of the federation-shapes suite, each with the queries asked of it and the answers a correct
// gateway gives. A subgraph that must not be asked for a field answers it with a sentence saying so, so a wrong plan
// shows in the data.
import type { Shape } from './harness.js';

const link = (...imports: string[]) =>
  `extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: [${imports.map((name) => `"${name}"`).join(', ')}])`;

const byId = <T extends { id: string | null }>(rows: T[]) => (reference: { id: string }) => rows.find((row) => row.id === reference.id) ?? null;

/** An interface entity in one subgraph, an @interfaceObject adding a field to it in another. */
const accounts = [
  { __typename: 'Admin', id: 'a1', name: 'Ada', isMain: true },
  { __typename: 'Regular', id: 'r1', name: 'Rob', isActive: false },
];
const levels: Record<string, number> = { a1: 9, r1: 2 };
export const interfaceObject: Shape = {
  name: '@interfaceObject',
  subgraphs: [
    {
      name: 'a',
      typeDefs: /* GraphQL */ `
        ${link('@key')}
        type Query { accounts: [Account!]! }
        interface Account @key(fields: "id") { id: ID! name: String! }
        type Admin implements Account @key(fields: "id") { id: ID! name: String! isMain: Boolean! }
        type Regular implements Account @key(fields: "id") { id: ID! name: String! isActive: Boolean! }
      `,
      resolvers: {
        Query: { accounts: () => accounts },
        Account: { __resolveReference: byId(accounts), __resolveType: (account: { __typename: string }) => account.__typename },
        Admin: { __resolveReference: byId(accounts) },
        Regular: { __resolveReference: byId(accounts) },
      },
    },
    {
      name: 'b',
      typeDefs: /* GraphQL */ `
        ${link('@key', '@interfaceObject')}
        type Query { topAccount: Account }
        type Account @key(fields: "id") @interfaceObject { id: ID! level: Int! }
      `,
      resolvers: {
        Query: { topAccount: () => ({ id: 'a1' }) },
        Account: { __resolveReference: ({ id }: { id: string }) => ({ id }), level: ({ id }: { id: string }) => levels[id] },
      },
    },
  ],
  queries: [
    { query: '{ accounts { name level } }', data: { accounts: [{ name: 'Ada', level: 9 }, { name: 'Rob', level: 2 }] } },
    {
      query: '{ accounts { __typename id level } }',
      data: { accounts: [{ __typename: 'Admin', id: 'a1', level: 9 }, { __typename: 'Regular', id: 'r1', level: 2 }] },
    },
    {
      query: '{ accounts { ... on Admin { isMain level } ... on Regular { isActive } } }',
      data: { accounts: [{ isMain: true, level: 9 }, { isActive: false }] },
    },
    { query: '{ topAccount { level name } }', data: { topAccount: { level: 9, name: 'Ada' } } },
    { query: '{ topAccount { ... on Admin { isMain } } }', data: { topAccount: { isMain: true } } },
  ],
};

/** Fields provided on the way to an entity: the providing subgraph answers them, never the owner. */
const WRONG_SUBGRAPH = "You should be using the 'a' subgraph!";
const media = [
  { __typename: 'Book', id: 'b1', title: 'Dune' },
  { __typename: 'Movie', id: 'm1' },
];
export const provides: Shape = {
  name: '@provides',
  subgraphs: [
    {
      name: 'a',
      typeDefs: /* GraphQL */ `
        ${link('@key', '@provides', '@external')}
        type Query {
          media: [Media!]! @provides(fields: "... on Book { title }")
          reviews: [Review!]!
        }
        interface Media { id: ID! }
        type Book implements Media @key(fields: "id") { id: ID! title: String! @external }
        type Movie implements Media @key(fields: "id") { id: ID! }
        type Review { body: String! product: Product @provides(fields: "name") }
        type Product @key(fields: "upc") { upc: String! name: String! @external }
      `,
      resolvers: {
        Query: {
          media: () => media,
          reviews: () => [
            { body: 'Great', product: { upc: 'p1', name: 'Lamp' } },
            { body: 'Fine', product: { upc: 'p2', name: 'Desk' } },
          ],
        },
        Media: { __resolveType: (item: { __typename: string }) => item.__typename },
      },
    },
    {
      name: 'b',
      typeDefs: /* GraphQL */ `
        ${link('@key', '@shareable')}
        type Book @key(fields: "id") { id: ID! title: String! @shareable }
        type Movie @key(fields: "id") { id: ID! title: String! }
        type Product @key(fields: "upc") { upc: String! id: ID! name: String! @shareable price: Int! }
      `,
      resolvers: {
        Book: { __resolveReference: ({ id }: { id: string }) => ({ id }), title: () => WRONG_SUBGRAPH },
        Movie: { __resolveReference: ({ id }: { id: string }) => ({ id }), title: () => 'Alien' },
        Product: {
          __resolveReference: ({ upc }: { upc: string }) => ({ upc }),
          // A product b cannot name: asking b for its id (no client does) fails and nulls the product.
          id: ({ upc }: { upc: string }) => (upc === 'p1' ? `product-${upc}` : null),
          name: () => WRONG_SUBGRAPH,
          price: () => 30,
        },
      },
    },
  ],
  queries: [
    { query: '{ media { ... on Book { title } } }', data: { media: [{ title: 'Dune' }, {}] } },
    { query: '{ media { id ... on Book { title } ... on Movie { title } } }', data: { media: [{ id: 'b1', title: 'Dune' }, { id: 'm1', title: 'Alien' }] } },
    {
      query: '{ reviews { body product { name } } }',
      data: { reviews: [{ body: 'Great', product: { name: 'Lamp' } }, { body: 'Fine', product: { name: 'Desk' } }] },
    },
    {
      query: '{ reviews { product { upc name price } } }',
      data: { reviews: [{ product: { upc: 'p1', name: 'Lamp', price: 30 } }, { product: { upc: 'p2', name: 'Desk', price: 30 } }] },
    },
  ],
};

/** A key field that is null in one row: that entity cannot be fetched, its fields from elsewhere are null. */
const books = [
  { id: 'b1', title: 'Dune' },
  { id: null, title: 'Untitled draft' },
];
export const nullableKeys: Shape = {
  name: 'nullable keys',
  subgraphs: [
    {
      name: 'a',
      typeDefs: /* GraphQL */ `
        ${link('@key')}
        type Query { books: [Book!]! }
        type Book @key(fields: "id") { id: ID title: String! }
      `,
      resolvers: { Query: { books: () => books }, Book: { __resolveReference: byId(books) } },
    },
    {
      name: 'b',
      typeDefs: /* GraphQL */ `
        ${link('@key')}
        type Book @key(fields: "id") { id: ID author: String }
      `,
      resolvers: { Book: { __resolveReference: ({ id }: { id: string }) => ({ id }), author: ({ id }: { id: string }) => (id === 'b1' ? 'Herbert' : 'Nobody') } },
    },
  ],
  queries: [
    { query: '{ books { title author } }', data: { books: [{ title: 'Dune', author: 'Herbert' }, { title: 'Untitled draft', author: null }] } },
    { query: '{ books { id author } }', data: { books: [{ id: 'b1', author: 'Herbert' }, { id: null, author: null }] } },
    { query: '{ books { title } }', data: { books: [{ title: 'Dune' }, { title: 'Untitled draft' }] } },
  ],
};

/** One node(id) field resolving types whose fields live in different subgraphs. */
const nodes: Record<string, { __typename: string; id: string }> = {
  u1: { __typename: 'User', id: 'u1' },
  p1: { __typename: 'Post', id: 'p1' },
};
export const node: Shape = {
  name: 'node(id)',
  subgraphs: [
    {
      name: 'a',
      typeDefs: /* GraphQL */ `
        ${link('@key')}
        type Query { node(id: ID!): Node }
        interface Node { id: ID! }
        type User implements Node @key(fields: "id") { id: ID! }
        type Post implements Node @key(fields: "id") { id: ID! }
      `,
      resolvers: {
        Query: { node: (_: unknown, { id }: { id: string }) => nodes[id] ?? null },
        Node: { __resolveType: (found: { __typename: string }) => found.__typename },
      },
    },
    {
      name: 'b',
      typeDefs: /* GraphQL */ `
        ${link('@key')}
        type User @key(fields: "id") { id: ID! name: String! }
      `,
      resolvers: { User: { __resolveReference: ({ id }: { id: string }) => ({ id }), name: () => 'Uma' } },
    },
    {
      name: 'c',
      typeDefs: /* GraphQL */ `
        ${link('@key')}
        type Post @key(fields: "id") { id: ID! title: String! }
      `,
      resolvers: { Post: { __resolveReference: ({ id }: { id: string }) => ({ id }), title: () => 'Hello' } },
    },
  ],
  queries: [
    { query: '{ node(id: "u1") { ... on User { name } } }', data: { node: { name: 'Uma' } } },
    {
      query: '{ user: node(id: "u1") { id ... on User { name } ... on Post { title } } post: node(id: "p1") { ... on User { name } ... on Post { title } } }',
      data: { user: { id: 'u1', name: 'Uma' }, post: { title: 'Hello' } },
    },
    { query: '{ node(id: "p1") { __typename ... on Post { title } } }', data: { node: { __typename: 'Post', title: 'Hello' } } },
    { query: '{ node(id: "none") { id } }', data: { node: null } },
  ],
};

/** A field computed in one subgraph from fields it requires from another. */
const products = [
  { id: 'p1', price: 100, weight: 3 },
  { id: 'p2', price: 2000, weight: 1 },
];
export const requires: Shape = {
  name: '@requires',
  subgraphs: [
    {
      name: 'a',
      typeDefs: /* GraphQL */ `
        ${link('@key')}
        type Query { products: [Product!]! }
        type Product @key(fields: "id") { id: ID! price: Int! weight: Int! }
      `,
      resolvers: { Query: { products: () => products }, Product: { __resolveReference: byId(products) } },
    },
    {
      name: 'b',
      typeDefs: /* GraphQL */ `
        ${link('@key', '@external', '@requires')}
        type Product @key(fields: "id") { id: ID! price: Int! @external weight: Int! @external shippingEstimate: Int! @requires(fields: "price weight") }
      `,
      resolvers: {
        Product: {
          // Free shipping over 1000, else 10 per unit of weight.
          shippingEstimate: ({ price, weight }: { price: number; weight: number }) => (price > 1000 ? 0 : weight * 10),
        },
      },
    },
  ],
  queries: [
    { query: '{ products { shippingEstimate } }', data: { products: [{ shippingEstimate: 30 }, { shippingEstimate: 0 }] } },
    { query: '{ products { id price shippingEstimate } }', data: { products: [{ id: 'p1', price: 100, shippingEstimate: 30 }, { id: 'p2', price: 2000, shippingEstimate: 0 }] } },
  ],
};

/** A union whose members are entities owned by other subgraphs. */
export const unions: Shape = {
  name: 'unions across subgraphs',
  subgraphs: [
    {
      name: 'a',
      typeDefs: /* GraphQL */ `
        ${link('@key')}
        union Result = Book | Movie
        type Query { search: [Result!]! }
        type Book @key(fields: "id") { id: ID! }
        type Movie @key(fields: "id") { id: ID! }
      `,
      resolvers: {
        Query: { search: () => [{ __typename: 'Book', id: 'b1' }, { __typename: 'Movie', id: 'm1' }] },
        Result: { __resolveType: (result: { __typename: string }) => result.__typename },
      },
    },
    {
      name: 'b',
      typeDefs: /* GraphQL */ `
        ${link('@key')}
        type Book @key(fields: "id") { id: ID! title: String! }
      `,
      resolvers: { Book: { __resolveReference: ({ id }: { id: string }) => ({ id }), title: () => 'Dune' } },
    },
    {
      name: 'c',
      typeDefs: /* GraphQL */ `
        ${link('@key')}
        type Movie @key(fields: "id") { id: ID! name: String! }
      `,
      resolvers: { Movie: { __resolveReference: ({ id }: { id: string }) => ({ id }), name: () => 'Alien' } },
    },
  ],
  queries: [
    { query: '{ search { ... on Book { title } ... on Movie { name } } }', data: { search: [{ title: 'Dune' }, { name: 'Alien' }] } },
    { query: '{ search { __typename ... on Movie { id name } } }', data: { search: [{ __typename: 'Book' }, { __typename: 'Movie', id: 'm1', name: 'Alien' }] } },
  ],
};

/** A field moved to another subgraph with @override: only the new owner is asked for it. */
const OVERRIDDEN = "You should be using the 'b' subgraph!";
export const override: Shape = {
  name: '@override',
  subgraphs: [
    {
      name: 'a',
      typeDefs: /* GraphQL */ `
        ${link('@key')}
        type Query { products: [Product!]! }
        type Product @key(fields: "id") { id: ID! name: String! stock: Int! }
      `,
      resolvers: {
        Query: { products: () => [{ id: 'p1', stock: 4 }] },
        Product: { __resolveReference: ({ id }: { id: string }) => ({ id, stock: 4 }), name: () => OVERRIDDEN },
      },
    },
    {
      name: 'b',
      typeDefs: /* GraphQL */ `
        ${link('@key', '@override')}
        type Product @key(fields: "id") { id: ID! name: String! @override(from: "a") }
      `,
      resolvers: { Product: { __resolveReference: ({ id }: { id: string }) => ({ id }), name: () => 'Lamp' } },
    },
  ],
  queries: [
    { query: '{ products { name } }', data: { products: [{ name: 'Lamp' }] } },
    { query: '{ products { id name stock } }', data: { products: [{ id: 'p1', name: 'Lamp', stock: 4 }] } },
  ],
};

export const SHAPES: readonly Shape[] = [interfaceObject, provides, nullableKeys, node, requires, unions, override];
