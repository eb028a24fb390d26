// One deterministic data set for development and demos. Each subgraph seeds only its own part of it, and the parts
// agree: orders reference seeded users and products and carry the seeded products' prices.

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

export const SEED_COUNTS = { users: 100, products: 200, orders: 1000 } as const;

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
const pad = (n: number) => String(n).padStart(4, '0');

let cached: SeedData | undefined;

export function seedData(): SeedData {
  if (cached) return cached;
  const next = seededRandom(20261121);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;

  const users: SeedUser[] = Array.from({ length: SEED_COUNTS.users }, (_, i) => {
    if (i === 0) {
      return { localId: SEED_ADMIN_LOCAL_ID, email: 'admin@example.com', name: 'Ada Admin', role: 'ADMIN', createdAt: new Date(EPOCH) };
    }
    const name = `${FIRST_NAMES[i % FIRST_NAMES.length]} ${LAST_NAMES[Math.floor(i / FIRST_NAMES.length) % LAST_NAMES.length]}`;
    return { localId: `user-${pad(i)}`, email: `user${i}@example.com`, name, role: 'USER', createdAt: new Date(EPOCH + i * HOUR) };
  });

  const products: SeedProduct[] = Array.from({ length: SEED_COUNTS.products }, (_, i) => {
    const name = `${ADJECTIVES[i % ADJECTIVES.length]} ${NOUNS[Math.floor(i / ADJECTIVES.length) % NOUNS.length]}`;
    return {
      localId: `product-${pad(i)}`,
      name,
      description: `A ${name.toLowerCase()} from the seed catalog.`,
      priceCents: 199 + Math.floor(next() * 20_000),
      createdAt: new Date(EPOCH + i * 60_000),
    };
  });

  const orders: SeedOrder[] = Array.from({ length: SEED_COUNTS.orders }, (_, i) => {
    const itemCount = 1 + Math.floor(next() * 4);
    const chosen = new Set<SeedProduct>();
    while (chosen.size < itemCount) chosen.add(pick(products));
    return {
      localId: `order-${pad(i)}`,
      // Every user but the admin has orders; the first ordinary user gets at least one.
      userLocalId: i === 0 ? SEED_USER_LOCAL_ID : users[1 + Math.floor(next() * (users.length - 1))]!.localId,
      status: pick(STATUSES),
      items: [...chosen].map((product) => ({
        productLocalId: product.localId,
        quantity: 1 + Math.floor(next() * 5),
        unitPriceCents: product.priceCents,
      })),
      createdAt: new Date(EPOCH + 2 * 24 * HOUR + i * 10 * 60_000),
    };
  });

  cached = { users, products, orders };
  return cached;
}
