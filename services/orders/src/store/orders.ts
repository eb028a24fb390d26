// The orders collection: stored documents and the queries on them, for either backend. Every change to an order
// is a compare-and-set on its version, so concurrent writers cannot overwrite each other unseen.
import { randomUUID } from 'node:crypto';
import { findByIdsInKeyOrder, type DocumentCollection, type DocumentDatabase, type IndexSpec } from '@ordergraph/store';

/** Every status an order document may hold; the state machine in domain/ decides the moves between them. */
export const ORDER_STATUSES = ['PENDING', 'PROCESSING', 'SHIPPED', 'DELIVERED', 'CANCELLED'] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

export interface LineItemDoc {
  /** The product's global ID (the catalog owns products). */
  productId: string;
  quantity: number;
  /** The catalog's price when the item was priced, in cents. */
  unitPriceCents: number;
}

export interface OrderDoc {
  [key: string]: unknown;
  /** Local id; clients see toGlobalId('Order', _id). */
  _id: string;
  /** The owner's global ID (the users subgraph owns users). */
  userId: string;
  status: OrderStatus;
  items: LineItemDoc[];
  /** Sum of the items' subtotals, kept in step with `items` by every write. */
  totalCents: number;
  /** Incremented by every change; the compare-and-set token. */
  version: number;
  createdAt: Date;
  updatedAt: Date;
}

export interface NewOrder {
  userId: string;
  items: LineItemDoc[];
}

export interface OrderChanges {
  status?: OrderStatus | undefined;
  items?: LineItemDoc[] | undefined;
}

/** Every query below reads one of these or _id (docs/operating.md, Indexes, lists them with the API fields they serve). */
const ORDER_INDEXES: IndexSpec[] = [
  // User.orders: one user's orders, newest first, ties by _id: ordered, so an offset is a position.
  { name: 'userId_createdAt_id', key: { userId: 1, createdAt: -1, _id: -1 } },
];

/** `_id` breaks ties between orders created in the same millisecond, so the order is total on both backends. */
const NEWEST_FIRST = { createdAt: -1, _id: -1 } as const;

export const totalCentsOf = (items: readonly LineItemDoc[]): number =>
  items.reduce((sum, item) => sum + item.quantity * item.unitPriceCents, 0);

export class OrderStore {
  private constructor(private readonly orders: DocumentCollection<OrderDoc>) {}

  static async open(db: DocumentDatabase): Promise<OrderStore> {
    return new OrderStore(await db.collection<OrderDoc>('orders', ORDER_INDEXES));
  }

  /** One query for a batch of ids; results in key order, null for a missing id. */
  findByIds(ids: readonly string[]): Promise<(OrderDoc | null)[]> {
    return findByIdsInKeyOrder(this.orders, ids);
  }

  /** A fresh read, bypassing any request cache: what a write decides on. */
  findById(id: string): Promise<OrderDoc | null> {
    return this.orders.findOne({ _id: id });
  }

  /**
   * One query for a batch of users (global IDs): each user's orders, newest first, from `skip` (default 0) up to
   * `limitPerUser` of them, in key order. With a single user the window goes into the query, read from the index at
   * any depth; a batch of several reads their orders whole.
   */
  async findByUserIds(userIds: readonly string[], limitPerUser: number, skip = 0): Promise<OrderDoc[][]> {
    const unique = [...new Set(userIds)];
    if (unique.length === 0 || limitPerUser === 0) return userIds.map(() => []);
    const single = unique.length === 1;
    const docs = await this.orders.find(
      single ? { userId: unique[0] } : { userId: { $in: unique } },
      { sort: NEWEST_FIRST, ...(single ? { skip, limit: limitPerUser } : {}) },
    );
    if (single) return userIds.map(() => docs);
    const byUser = new Map<string, OrderDoc[]>(unique.map((id) => [id, []]));
    for (const doc of docs) byUser.get(doc.userId)!.push(doc);
    return userIds.map((id) => byUser.get(id)!.slice(skip, skip + limitPerUser));
  }

  async create(input: NewOrder, now = new Date()): Promise<OrderDoc> {
    const doc: OrderDoc = {
      _id: randomUUID(),
      userId: input.userId,
      status: 'PENDING',
      items: input.items,
      totalCents: totalCentsOf(input.items),
      version: 0,
      createdAt: now,
      updatedAt: now,
    };
    await this.orders.insertOne(doc);
    return doc;
  }

  /**
   * Applies `changes` only if the order is still at the version `current` was read at; returns the order as
   * updated, or null when another write got there first (the caller re-reads and decides again).
   */
  compareAndSet(current: OrderDoc, changes: OrderChanges, now = new Date()): Promise<OrderDoc | null> {
    const set: Record<string, unknown> = { updatedAt: now };
    if (changes.status !== undefined) set['status'] = changes.status;
    if (changes.items !== undefined) {
      set['items'] = changes.items;
      set['totalCents'] = totalCentsOf(changes.items);
    }
    return this.orders.findOneAndUpdate({ _id: current._id, version: current.version }, { $set: set, $inc: { version: 1 } });
  }

  /** Loads documents as they are (seed data), a batch at a time; skipped when the collection already has orders. */
  async seed(batches: Iterable<OrderDoc[]>): Promise<number> {
    if ((await this.orders.count({})) > 0) return 0;
    let written = 0;
    for (const docs of batches) {
      await this.orders.insertMany(docs);
      written += docs.length;
    }
    return written;
  }
}
