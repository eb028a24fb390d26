// The benchmark's scenarios. (a) to (c) send one identical request from every connection, which flatters a gateway
// that shares identical subgraph calls in flight; (d) to (g) draw each request's arguments at random from the seed
// (bench/workloads.ts), and (g) mixes shapes and writes. Every gateway answers each of them identically.
import { fromGlobalId, toGlobalId } from '@ordergraph/core';
import { orderLocalId, productLocalId, seedCounts, seedData, userLocalId } from '@ordergraph/seed';
import { sample, seededRandom, uniformDraw, zipfDraw, type GraphQLResponse, type Population, type Workload } from './workloads.js';

interface ScenarioBase {
  id: string;
  name: string;
}

/** One request, the same from every connection for the whole run. */
export interface IdenticalScenario extends ScenarioBase {
  query: string;
  variables: Record<string, unknown>;
}

/** Requests drawn one by one from a workload. */
export interface VariedScenario extends ScenarioBase {
  workload: Workload;
  /** The same workload over the data set seeded at a larger SEED_SCALE: the scenario runs at that size too (--scale). */
  atScale?: (scale: number) => Workload;
}

export type Scenario = IdenticalScenario | VariedScenario;

export const isVaried = (scenario: Scenario): scenario is VariedScenario => 'workload' in scenario;

const ORDERS_LIMIT = 20;
const ORDERS_QUERY =
  'query Orders($id: ID!) { user(id: $id) { name email orders(limit: ' + ORDERS_LIMIT + ') { id status total createdAt user { name } items { quantity unitPrice subtotal product { name price } } } } }';
const ORDER_QUERY =
  'query Order($id: ID!) { order(id: $id) { id status total createdAt updatedAt user { name email } items { quantity unitPrice subtotal product { id name price } } } }';
const PRODUCT_QUERY = 'query Product($id: ID!) { product(id: $id) { id name price currentPrice description } }';
const PRODUCTS_QUERY = 'query Products($offset: Int!) { products(limit: 10, offset: $offset) { id name price } }';

/** At most this many variants per shape: every gateway answers each before timing, so the sample bounds that check. */
export const MAX_VARIANTS = 200;

const seed = seedData();
const draw = seededRandom(20261127);
// Every seeded user but the administrator (user-0001..user-0099), every product, a fixed sample of the orders.
const USERS = seed.users.filter((user) => user.role === 'USER').map((user) => user.localId);
const userVariants = sample(USERS, MAX_VARIANTS, draw).map((localId) => ({ id: toGlobalId('User', localId) }));
const userOf = new Map(USERS.map((localId) => [toGlobalId('User', localId), localId]));
const ordersOf = { user: (variables: Record<string, unknown>) => userOf.get(variables['id'] as string)!, limit: ORDERS_LIMIT };
const productIds = seed.products.map((product) => toGlobalId('Product', product.localId));
const productVariants = sample(productIds, MAX_VARIANTS, draw).map((id) => ({ id }));
const orderVariants = sample(seed.orders, MAX_VARIANTS, draw).map((order) => ({ id: toGlobalId('Order', order.localId) }));
const offsetVariants = Array.from({ length: seed.products.length - 10 + 1 }, (_, offset) => ({ offset })).filter((_, index) => index % 5 === 0);

const STATUSES = new Set(['PENDING', 'PROCESSING', 'SHIPPED', 'DELIVERED', 'CANCELLED']);
interface OrdersAnswer {
  user?: { name: string; email: string; orders: { id: unknown; status: unknown; total: unknown; user: { name: string } | null; items: { product: { name: unknown } | null }[] }[] } | null;
}

/**
 * What (g)'s writes cannot change of a user and their orders: the user's name and email, and that every order is
 * well formed and theirs. Which orders, and their statuses, move as the writes place and cancel orders.
 */
function userWithOrdersStable(response: GraphQLResponse): unknown {
  const user = (response.data as OrdersAnswer | null | undefined)?.user;
  if (!user) return null;
  const wellFormed =
    Array.isArray(user.orders) &&
    user.orders.length <= ORDERS_LIMIT &&
    user.orders.every(
      (order) =>
        typeof order.id === 'string' &&
        STATUSES.has(order.status as string) &&
        typeof order.total === 'number' &&
        order.user?.name === user.name &&
        order.items.length > 0 &&
        order.items.every((item) => typeof item.product?.name === 'string'),
    );
  return { name: user.name, email: user.email, ordersWellFormed: wellFormed };
}

/** Zipf's exponent for the size scenarios: a few keys hot, a long tail, as web traffic is commonly modelled. */
const ZIPF_S = 1.1;
/** Keys of each shape every gateway answers before timing, drawn as the load draws them. */
const CHECKED_KEYS = 20;
/** Seeded users who write in (j), and products their orders draw from: tokens are minted for each writer. */
const WRITERS = 200;
const WRITTEN_PRODUCTS = 1000;

/** Every key of one kind, drawn by Zipf or uniformly, with a few of them for the check before timing. */
function population(size: number, variables: (index: number) => Record<string, unknown>, how: 'zipf' | 'uniform', seed: number): { population: Population; variants: Record<string, unknown>[] } {
  const draw = how === 'zipf' ? zipfDraw(size, ZIPF_S, seed) : uniformDraw(size);
  const describe = `${how === 'zipf' ? `Zipf (s = ${ZIPF_S})` : 'uniformly'} over ${size.toLocaleString('en')}`;
  const random = seededRandom(seed);
  const checked = [...new Set(Array.from({ length: CHECKED_KEYS }, () => draw(random)))];
  return { population: { size, variables, draw, describe, sample: checked }, variants: checked.map(variables) };
}

function sizedWorkload(scale: number, how: 'zipf' | 'uniform', withWrites: boolean): Workload {
  const counts = seedCounts(scale);
  // Users from 1: the administrator (user 0) has no orders.
  const userId = (index: number) => ({ id: toGlobalId('User', userLocalId(index + 1)) });
  const users = population(counts.users - 1, userId, how, 11);
  const products = population(counts.products, (index) => ({ id: toGlobalId('Product', productLocalId(index)) }), how, 12);
  const orders = population(counts.orders, (index) => ({ id: toGlobalId('Order', orderLocalId(index)) }), how, 13);
  const writers = seededRandom(14);
  const localOf = (variables: Record<string, unknown>) => fromGlobalId(variables['id'] as string)!.localId;
  return {
    shapes: [
      { name: 'product by id', weight: 50, query: PRODUCT_QUERY, viewer: 'ANONYMOUS', ...products },
      {
        name: 'user with orders',
        weight: 25,
        query: ORDERS_QUERY,
        viewer: 'ADMIN',
        ...users,
        ...(withWrites ? { stable: userWithOrdersStable, ordersOf: { user: localOf, limit: ORDERS_LIMIT } } : {}),
      },
      // Seeded orders: the writes change only orders placed during the run.
      { name: 'order by id', weight: 20, query: ORDER_QUERY, viewer: 'ADMIN', ...orders },
    ],
    ...(withWrites
      ? {
          writes: {
            weight: 5,
            // Distinct: an order names a product once.
            users: [...new Set(Array.from({ length: WRITERS }, () => userLocalId(1 + users.population.draw(writers))))],
            products: [...new Set(Array.from({ length: WRITTEN_PRODUCTS }, () => toGlobalId('Product', productLocalId(products.population.draw(writers)))))],
          },
        }
      : {}),
  };
}

export const SCENARIOS: Scenario[] = [
  {
    id: 'a',
    name: 'identical request: product(id), one subgraph',
    query: 'query Product($id: ID!) { product(id: $id) { id name currentPrice } }',
    variables: { id: toGlobalId('Product', 'product-0007') },
  },
  {
    id: 'b',
    name: 'identical request: a user, 20 orders, their items and products, three subgraphs',
    query: ORDERS_QUERY,
    variables: { id: toGlobalId('User', 'user-0001') },
  },
  {
    // The shape of The Guild's federation gateway benchmark: many fields, entities resolved back and forth between
    // subgraphs over several levels (users -> orders -> user -> orders -> items -> products), plus a second root list.
    id: 'c',
    name: 'identical request: wide, users, orders, user, orders, items, products, and products',
    query: `fragment U on User { id name email role createdAt }
fragment O on Order { id status total createdAt updatedAt }
fragment P on Product { id name price currentPrice description createdAt }
query Wide {
  users(limit: 7) { ...U orders(limit: 4) { ...O user { ...U orders(limit: 4) { ...O items { quantity unitPrice subtotal product { ...P } } } } } }
  products(limit: 40) { ...P }
}`,
    variables: {},
  },
  {
    id: 'd',
    name: "(b)'s shape for a user drawn per request, three subgraphs",
    workload: { shapes: [{ name: 'user with orders', weight: 1, query: ORDERS_QUERY, viewer: 'ADMIN', variants: userVariants }] },
  },
  {
    id: 'e',
    name: 'an order drawn per request, its items and products, three subgraphs',
    workload: { shapes: [{ name: 'order by id', weight: 1, query: ORDER_QUERY, viewer: 'ADMIN', variants: orderVariants }] },
  },
  {
    id: 'f',
    name: 'a product drawn per request, anonymous (our response cache in play), one subgraph',
    workload: { shapes: [{ name: 'product by id', weight: 1, query: PRODUCT_QUERY, viewer: 'ANONYMOUS', variants: productVariants }] },
    // At --scale, drawn uniformly from every product: nearly every read a miss of ours' caches, what a miss costs.
    atScale: (scale) => ({
      shapes: [{ name: 'product by id', weight: 1, query: PRODUCT_QUERY, viewer: 'ANONYMOUS', ...population(seedCounts(scale).products, (index) => ({ id: toGlobalId('Product', productLocalId(index)) }), 'uniform', 12) }],
    }),
  },
  // The same three shapes over every key of the data set, at scale 1 and again at --scale (1,000 by default: 100,000
  // users, 200,000 products, 1,000,000 orders), so that each gateway's figures at size sit beside its own at scale 1.
  {
    id: 'h',
    name: 'at size: products, users with orders and orders, keys drawn by Zipf (s = 1.1) over the whole data set',
    workload: sizedWorkload(1, 'zipf', false),
    atScale: (scale) => sizedWorkload(scale, 'zipf', false),
  },
  {
    id: 'i',
    name: 'at size: as (h), keys drawn uniformly',
    workload: sizedWorkload(1, 'uniform', false),
    atScale: (scale) => sizedWorkload(scale, 'uniform', false),
  },
  {
    // After every read-only scenario: its writes place and cancel orders, which later reads of users' orders would see
    // (Grafbase's own subgraphs see other writes than the others').
    id: 'g',
    name: 'mixed: products, users with orders, orders, product lists, 5 % writes',
    workload: {
      shapes: [
        { name: 'product by id', weight: 50, query: PRODUCT_QUERY, viewer: 'ANONYMOUS', variants: productVariants },
        { name: 'user with orders', weight: 25, query: ORDERS_QUERY, viewer: 'ADMIN', variants: userVariants, stable: userWithOrdersStable, ordersOf },
        // Seeded orders: the writes change only orders placed during the run, so these answers cannot move.
        { name: 'order by id', weight: 15, query: ORDER_QUERY, viewer: 'ADMIN', variants: orderVariants },
        { name: 'products list', weight: 5, query: PRODUCTS_QUERY, viewer: 'ANONYMOUS', variants: offsetVariants },
      ],
      writes: { weight: 5, users: USERS, products: productIds },
    },
  },
  {
    // Last: its writes place and cancel orders.
    id: 'j',
    name: 'at size: as (h), with 5 % writes',
    workload: sizedWorkload(1, 'zipf', true),
    atScale: (scale) => sizedWorkload(scale, 'zipf', true),
  },
];
