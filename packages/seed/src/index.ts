// One deterministic data set for development, tests and benchmarks, at any size (SEED_SCALE). Each subgraph generates
// only its own part, record by record, and the parts agree without any of them holding another's: an order names its
// user and products by index and reads a product's price from the same formula the catalog seeds it with.

export interface SeedUser {
  localId: string;
  email: string;
  name: string;
  role: 'USER' | 'ADMIN';
  createdAt: Date;
}

export interface SeedProduct {
  localId: string;
  name: string;
  description: string;
  priceCents: number;
  createdAt: Date;
}

export type SeedOrderStatus = 'PENDING' | 'PROCESSING' | 'SHIPPED' | 'DELIVERED' | 'CANCELLED';

export interface SeedOrder {
  localId: string;
  userLocalId: string;
  status: SeedOrderStatus;
  items: { productLocalId: string; quantity: number; unitPriceCents: number }[];
  createdAt: Date;
}

export interface SeedData {
  users: SeedUser[];
  products: SeedProduct[];
  orders: SeedOrder[];
}

/** The data set at scale 1; SEED_SCALE multiplies every count. */
export const SEED_COUNTS = { users: 100, products: 200, orders: 1000 } as const;

/** The largest SEED_SCALE accepted: 10,000,000 orders, far beyond what one embedded process is meant to hold. */
export const MAX_SEED_SCALE = 10_000;

export type SeedCounts = { users: number; products: number; orders: number };

/** How many records each part of the data set holds at `scale`. */
export function seedCounts(scale = 1): SeedCounts {
  if (!Number.isInteger(scale) || scale < 1 || scale > MAX_SEED_SCALE) throw new RangeError(`seed scale must be a whole number from 1 to ${MAX_SEED_SCALE}`);
  return { users: SEED_COUNTS.users * scale, products: SEED_COUNTS.products * scale, orders: SEED_COUNTS.orders * scale };
}

/** The seeded administrator and the first ordinary user, for ready-made development tokens. */
export const SEED_ADMIN_LOCAL_ID = 'user-0000';
export const SEED_USER_LOCAL_ID = 'user-0001';

/** mulberry32: a tiny seeded PRNG, so every run produces the same data (and the benchmark the same draws). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const FIRST_NAMES = ['Ada', 'Grace', 'Alan', 'Barbara', 'Edsger', 'Frances', 'Donald', 'Margaret', 'Ken', 'Radia', 'Linus', 'Hedy', 'Dennis', 'Karen', 'Tim', 'Sophie', 'John', 'Shafi', 'Niklaus', 'Lynn'];
const LAST_NAMES = ['Lovelace', 'Hopper', 'Turing', 'Liskov', 'Dijkstra', 'Allen', 'Knuth', 'Hamilton', 'Thompson', 'Perlman', 'Torvalds', 'Lamarr', 'Ritchie', 'Jones', 'Berners-Lee', 'Wilson', 'Backus', 'Goldwasser', 'Wirth', 'Conway'];
const ADJECTIVES = ['Red', 'Blue', 'Green', 'Quiet', 'Rapid', 'Sturdy', 'Light', 'Smart', 'Classic', 'Compact'];
const NOUNS = ['Lamp', 'Chair', 'Kettle', 'Backpack', 'Keyboard', 'Notebook', 'Bottle', 'Speaker', 'Jacket', 'Mug', 'Desk', 'Clock', 'Camera', 'Pillow', 'Scarf', 'Blender', 'Tent', 'Helmet', 'Watch', 'Drone'];
const STATUSES: SeedOrderStatus[] = ['PENDING', 'PENDING', 'PROCESSING', 'SHIPPED', 'DELIVERED', 'DELIVERED', 'CANCELLED'];

const EPOCH = Date.UTC(2026, 0, 1);
const HOUR = 3_600_000;
const MINUTE = 60_000;
const pad = (n: number) => String(n).padStart(4, '0');

/** Repeated texts (names, descriptions) are built once, so a million records share a few hundred strings. */
function memo<K, V>(make: (key: K) => V): (key: K) => V {
  const made = new Map<K, V>();
  return (key) => {
    let value = made.get(key);
    if (value === undefined) made.set(key, (value = make(key)));
    return value;
  };
}
const userName = memo((i: number) => `${FIRST_NAMES[i % FIRST_NAMES.length]} ${LAST_NAMES[Math.floor(i / FIRST_NAMES.length) % LAST_NAMES.length]}`);
const productName = memo((i: number) => `${ADJECTIVES[i % ADJECTIVES.length]} ${NOUNS[Math.floor(i / ADJECTIVES.length) % NOUNS.length]}`);
const productDescription = memo((name: string) => `A ${name.toLowerCase()} from the seed catalog.`);

export const userLocalId = (i: number): string => (i === 0 ? SEED_ADMIN_LOCAL_ID : `user-${pad(i)}`);
export const productLocalId = (i: number): string => `product-${pad(i)}`;
export const orderLocalId = (i: number): string => `order-${pad(i)}`;

/*
 * The records of scale 1 come from one sequential stream of draws, as they always have (tests depend on them); they
 * are the first records at every scale. Records beyond them draw from a stream of their own keyed by their index, so
 * any one of them is generated without the others.
 */
interface BaseDraws {
  productPrices: number[];
  orders: SeedOrder[];
}
let base: BaseDraws | undefined;

function baseDraws(): BaseDraws {
  if (base) return base;
  const next = seededRandom(20261121);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
  const productPrices = Array.from({ length: SEED_COUNTS.products }, () => 199 + Math.floor(next() * 20_000));
  const orders = Array.from({ length: SEED_COUNTS.orders }, (_, i): SeedOrder => {
    const itemCount = 1 + Math.floor(next() * 4);
    const chosen = new Set<number>();
    while (chosen.size < itemCount) chosen.add(Math.floor(next() * SEED_COUNTS.products));
    return {
      localId: orderLocalId(i),
      // Every user but the admin has orders; the first ordinary user gets at least one.
      userLocalId: i === 0 ? SEED_USER_LOCAL_ID : userLocalId(1 + Math.floor(next() * (SEED_COUNTS.users - 1))),
      status: pick(STATUSES),
      items: [...chosen].map((j) => ({ productLocalId: productLocalId(j), quantity: 1 + Math.floor(next() * 5), unitPriceCents: productPrices[j]! })),
      createdAt: new Date(EPOCH + 2 * 24 * HOUR + i * 10 * MINUTE),
    };
  });
  base = { productPrices, orders };
  return base;
}

/** A stream of draws of its own for record `i` of one kind. */
const drawsFor = (kind: number, i: number) => seededRandom(Math.imul(i + 1, 0x9e3779b1) ^ Math.imul(kind, 0x85ebca6b) ^ 20261121);

/** User `i`: the administrator first, then `user<i>@example.com`, an hour apart, then (beyond scale 1) a minute apart. */
export function seedUserAt(i: number): SeedUser {
  if (i === 0) return { localId: SEED_ADMIN_LOCAL_ID, email: 'admin@example.com', name: 'Ada Admin', role: 'ADMIN', createdAt: new Date(EPOCH) };
  const at = i < SEED_COUNTS.users ? EPOCH + i * HOUR : EPOCH + SEED_COUNTS.users * HOUR + (i - SEED_COUNTS.users) * MINUTE;
  return { localId: userLocalId(i), email: `user${i}@example.com`, name: userName(i), role: 'USER', createdAt: new Date(at) };
}

/** The price product `i` is seeded with, which the orders naming it carry. */
export function seedProductPriceCents(i: number): number {
  return i < SEED_COUNTS.products ? baseDraws().productPrices[i]! : 199 + Math.floor(drawsFor(2, i)() * 20_000);
}

/** Product `i`, a minute after the one before. */
export function seedProductAt(i: number): SeedProduct {
  const name = productName(i);
  return { localId: productLocalId(i), name, description: productDescription(name), priceCents: seedProductPriceCents(i), createdAt: new Date(EPOCH + i * MINUTE) };
}

/**
 * Order `i` of the data set at `scale`: its user and products are among that scale's (never the administrator), and
 * it carries their seeded prices. Ten minutes apart at scale 1, then ten seconds apart.
 */
export function seedOrderAt(i: number, scale = 1): SeedOrder {
  if (i < SEED_COUNTS.orders) return baseDraws().orders[i]!;
  const counts = seedCounts(scale);
  const next = drawsFor(3, i);
  const itemCount = 1 + Math.floor(next() * 4);
  const chosen = new Set<number>();
  while (chosen.size < itemCount) chosen.add(Math.floor(next() * counts.products));
  return {
    localId: orderLocalId(i),
    userLocalId: userLocalId(1 + Math.floor(next() * (counts.users - 1))),
    status: STATUSES[Math.floor(next() * STATUSES.length)]!,
    items: [...chosen].map((j) => ({ productLocalId: productLocalId(j), quantity: 1 + Math.floor(next() * 5), unitPriceCents: seedProductPriceCents(j) })),
    createdAt: new Date(EPOCH + 2 * 24 * HOUR + SEED_COUNTS.orders * 10 * MINUTE + (i - SEED_COUNTS.orders) * 10_000),
  };
}

/** Every record of one part at `scale`, in index order, generated as they are read. */
export function* seedUsers(scale = 1): Generator<SeedUser> {
  for (let i = 0; i < seedCounts(scale).users; i++) yield seedUserAt(i);
}
export function* seedProducts(scale = 1): Generator<SeedProduct> {
  for (let i = 0; i < seedCounts(scale).products; i++) yield seedProductAt(i);
}
export function* seedOrders(scale = 1): Generator<SeedOrder> {
  for (let i = 0; i < seedCounts(scale).orders; i++) yield seedOrderAt(i, scale);
}

/**
 * Groups what `records` yields into arrays of `size`, so a store loads a large part without holding it whole. A
 * thousand: a batch dies young, where one of 10,000 outlived a scavenge and went to the old generation (at a million
 * orders, 90 MiB more peak and a seventh more CPU on the embedded store).
 */
export function* batches<T>(records: Iterable<T>, size = 1_000): Generator<T[]> {
  let batch: T[] = [];
  for (const record of records) {
    batch.push(record);
    if (batch.length === size) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}

const materialized = new Map<number, SeedData>();

/** The whole data set at `scale` in memory: for tests and tools at small scales, never for a service at size. */
export function seedData(scale = 1): SeedData {
  let data = materialized.get(scale);
  if (!data) materialized.set(scale, (data = { users: [...seedUsers(scale)], products: [...seedProducts(scale)], orders: [...seedOrders(scale)] }));
  return data;
}
