// Workloads whose requests differ from one to the next: which variant each request carries, drawn at random, and how
// its response is checked against that variant's own answer. Pure (no I/O), so that a test can hold it to both.

// Draws come from the seed's own PRNG, so that a run can be repeated.
import { seededRandom } from '@ordergraph/seed';
export { seededRandom };

/** `count` of `list`'s items (all of them if it holds no more), chosen by `random`, in the list's order. */
export function sample<T>(list: readonly T[], count: number, random: () => number): T[] {
  if (list.length <= count) return [...list];
  const indexes = list.map((_, index) => index);
  for (let i = 0; i < count; i++) {
    const j = i + Math.floor(random() * (indexes.length - i));
    [indexes[i], indexes[j]] = [indexes[j]!, indexes[i]!];
  }
  return indexes
    .slice(0, count)
    .sort((a, b) => a - b)
    .map((index) => list[index]!);
}

export interface GraphQLResponse {
  data?: Record<string, unknown> | null;
  errors?: unknown[];
}

/** Who sends a read: the seeded administrator (past the response cache) or nobody (the cache in play). */
export type Viewer = 'ADMIN' | 'ANONYMOUS';

/** One query shape of a workload, sent with one of its variants' variables at a time. */
export interface Shape {
  name: string;
  /** Its share of the workload's requests, relative to the other shapes' and the writes'. */
  weight: number;
  query: string;
  viewer: Viewer;
  /**
   * The variables of each variant: the fixed sample every gateway answers before timing (and must agree on), and
   * the only variables sent under load.
   */
  variants: Record<string, unknown>[];
  /**
   * What of an answer the workload's writes cannot change, compared in place of the whole body. Without it a
   * response must be byte for byte its gateway's answer to the same variant before timing.
   */
  stable?: (response: GraphQLResponse) => unknown;
  /**
   * For a read of a user's orders: the seeded user's local ID its variables name. Such a read sent while none of that
   * user's writes is in flight must show every write of theirs already answered (read-your-writes, OrderWrites).
   */
  ordersOf?: { user: (variables: Record<string, unknown>) => string; limit: number };
  /**
   * Keys drawn from a whole data set instead of `variants`, which then hold a few of them for the check before timing.
   * A draw's `variant` is then the key's index in the data set.
   */
  population?: Population;
}

/** Every key of one kind in the seeded data set (all users, all products), and how a request picks one. */
export interface Population {
  size: number;
  /** The variables of the request for the key at `index`. */
  variables(index: number): Record<string, unknown>;
  draw(random: () => number): number;
  /** How keys are drawn, for the output: `Zipf (s = 1.1) over 100,000`. */
  describe: string;
  /** The keys of the shape's `variants`, in their order. */
  sample: number[];
}

/** Keys drawn uniformly. */
export const uniformDraw = (size: number) => (random: () => number) => Math.floor(random() * size);

/**
 * Keys drawn from a Zipf distribution of exponent `s`: the key of rank k is drawn in proportion to 1 / k^s. Ranks are
 * given to keys by a fixed shuffle (`seed`), so that the hottest keys are spread over the data set rather than being
 * its first records (the seed's earliest users and products are special: the administrator, the first user's orders).
 */
export function zipfDraw(size: number, s: number, seed: number): (random: () => number) => number {
  const cumulative = new Float64Array(size);
  let sum = 0;
  for (let rank = 0; rank < size; rank++) cumulative[rank] = sum += 1 / (rank + 1) ** s;
  const keyOfRank = new Uint32Array(size);
  for (let i = 0; i < size; i++) keyOfRank[i] = i;
  const shuffle = seededRandom(seed);
  for (let i = size - 1; i > 0; i--) {
    const j = Math.floor(shuffle() * (i + 1));
    [keyOfRank[i], keyOfRank[j]] = [keyOfRank[j]!, keyOfRank[i]!];
  }
  return (random) => {
    const point = random() * sum;
    let low = 0;
    let high = size - 1;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (cumulative[middle]! < point) low = middle + 1;
      else high = middle;
    }
    return keyOfRank[low]!;
  };
}

/** Orders placed, changed and cancelled by the seeded users while the reads run. */
export interface Writes {
  weight: number;
  /** Seeded users' local ids: each write is signed in as one of them, changes only orders it placed itself. */
  users: string[];
  /** Products' global ids that placed orders draw their lines from. */
  products: string[];
}

export interface Workload {
  shapes: Shape[];
  writes?: Writes;
}

/** A request drawn from a workload: a read of one shape's variant, or a write. */
export type Draw = { kind: 'read'; shape: number; variant: number } | { kind: 'write'; write: Write };

export type Write =
  | { op: 'create'; user: string; items: LineItem[] }
  | { op: 'update'; user: string; orderId: string; items: LineItem[] }
  | { op: 'cancel'; user: string; orderId: string };

export interface LineItem {
  productId: string;
  quantity: number;
}

/**
 * What a response came to: its variant's answer, another body, a 200 carrying GraphQL errors, or a read of a user's
 * orders that misses a write of theirs answered before it was sent.
 */
export type Outcome = 'same' | 'differs' | 'errors' | 'stale';

const ORDER_FIELDS = 'id status items { quantity product { id } }';
export const WRITE_QUERIES = {
  create: `mutation Create($input: CreateOrderInput!) { createOrder(input: $input) { ${ORDER_FIELDS} } }`,
  update: `mutation Update($id: ID!, $input: UpdateOrderInput!) { updateOrder(id: $id, input: $input) { ${ORDER_FIELDS} } }`,
  cancel: `mutation Cancel($id: ID!) { cancelOrder(id: $id) { ${ORDER_FIELDS} } }`,
} as const;

/** A write's request body. */
export function writeBody(write: Write): string {
  if (write.op === 'create') return JSON.stringify({ query: WRITE_QUERIES.create, variables: { input: { items: write.items } } });
  if (write.op === 'update') return JSON.stringify({ query: WRITE_QUERIES.update, variables: { id: write.orderId, input: { items: write.items } } });
  return JSON.stringify({ query: WRITE_QUERIES.cancel, variables: { id: write.orderId } });
}

interface WrittenOrder {
  id: string;
  status: string;
  items: { quantity: number; product: { id: string } | null }[];
}

/**
 * The writes of one run under load. Each draw takes the order it changes out of the pool of orders placed in this
 * run, so no two requests in flight touch one order (that would be a conflict, not a gateway's fault); an order
 * updated goes back once its answer is in, one cancelled does not.
 */
/** What a read of one user's orders must show, taken as it is sent (OrderWrites.expectedOrders). */
export interface OrdersRead {
  user: string;
  /** Each order of theirs written in this run, by the status its write was answered with. */
  expected: ReadonlyMap<string, string>;
  /** How many writes of theirs had been sent when the read was: one sent later may overtake it. */
  writesSent: number;
}

export class OrderWrites {
  private readonly placed: { id: string; user: string }[] = [];
  /** Per user: writes sent and not yet answered, writes sent in all, and the status each order of theirs written in this run was answered with. */
  private readonly inFlight = new Map<string, number>();
  private readonly sent = new Map<string, number>();
  private readonly answered = new Map<string, Map<string, string>>();
  /** When each order's latest write was answered (performance.now()), for describeStale. */
  private readonly answeredAt = new Map<string, number>();

  constructor(private readonly writes: Writes) {}

  next(random: () => number): Write {
    const user = pick(this.writes.users, random);
    const write = this.draw(user, random);
    this.inFlight.set(write.user, (this.inFlight.get(write.user) ?? 0) + 1);
    this.sent.set(write.user, (this.sent.get(write.user) ?? 0) + 1);
    return write;
  }

  private draw(user: string, random: () => number): Write {
    if (this.placed.length === 0 || random() < 0.5) return { op: 'create', user, items: this.items(random) };
    const order = this.placed.splice(Math.floor(random() * this.placed.length), 1)[0]!;
    return random() < 0.5 ? { op: 'update', user: order.user, orderId: order.id, items: this.items(random) } : { op: 'cancel', user: order.user, orderId: order.id };
  }

  /**
   * What a read of `user`'s orders sent now must show; undefined while a write of theirs is in flight, when either
   * answer would be right.
   */
  expectedOrders(user: string): OrdersRead | undefined {
    if ((this.inFlight.get(user) ?? 0) > 0) return undefined;
    return { user, expected: new Map(this.answered.get(user)), writesSent: this.sent.get(user) ?? 0 };
  }

  /**
   * Whether a read's answer shows what it must. Their orders come newest first, up to the page's `limit`: a full page
   * may leave older ones out, but never shows one with another status. A write of theirs sent after the read ran
   * beside it and may have overtaken it (a cancel landing before the read reached the orders subgraph): either answer
   * is right then, and the read is not held to the older one.
   */
  check(read: OrdersRead, body: string, limit: number): Outcome {
    if ((this.sent.get(read.user) ?? 0) !== read.writesSent) return 'same';
    return OrderWrites.missed(read.expected, body, limit) ? 'stale' : 'same';
  }

  /** The first order a read should have shown as `expected` says and did not: its id, the status expected and the one shown. */
  private static missed(expected: ReadonlyMap<string, string>, body: string, limit: number) {
    const orders = (parsed(body)?.data?.['user'] as { orders?: { id: string; status: string }[] } | null | undefined)?.orders;
    if (!Array.isArray(orders)) return undefined;
    const listed = new Map(orders.map((order) => [order.id, order.status]));
    for (const [id, status] of expected) {
      const shown = listed.get(id);
      if (shown === undefined ? orders.length < limit : shown !== status) return { id, status, shown, listed: orders.length };
    }
    return undefined;
  }

  /**
   * A stale read in words, to find its cause: the order it missed, what its write was answered with and how long
   * before the read was sent, and what the read showed instead.
   */
  describeStale(read: OrdersRead, body: string, limit: number, sentAt: number): string {
    const miss = OrderWrites.missed(read.expected, body, limit);
    if (!miss) return `${read.user}: not stale`;
    const answeredAt = this.answeredAt.get(miss.id);
    const before = answeredAt === undefined ? '?' : (sentAt - answeredAt).toFixed(1);
    return `${read.user}: order ${miss.id} answered ${miss.status} ${before} ms before the read was sent, which showed ${miss.shown ?? 'no such order'} (${miss.listed} orders listed)`;
  }

  /** A write answered with another HTTP status than 200: its user's reads are checked again. */
  release(write: Write): void {
    this.inFlight.set(write.user, Math.max(0, (this.inFlight.get(write.user) ?? 0) - 1));
  }

  /** Checks a write's answer (status, lines, and the order it names) and returns the order to the pool if it may change again. */
  settle(write: Write, body: string): Outcome {
    this.release(write);
    const response = parsed(body);
    if (!response) return 'differs';
    if (response.errors) return 'errors';
    const order = response.data?.[{ create: 'createOrder', update: 'updateOrder', cancel: 'cancelOrder' }[write.op]] as WrittenOrder | undefined;
    if (!order || typeof order.id !== 'string') return 'differs';
    if (write.op !== 'create' && order.id !== write.orderId) return 'differs';
    const expected = write.op === 'cancel' ? 'CANCELLED' : 'PENDING';
    if (order.status !== expected) return 'differs';
    if (write.op !== 'cancel' && lines(order.items) !== lines(write.items.map((item) => ({ quantity: item.quantity, product: { id: item.productId } })))) return 'differs';
    const answered = this.answered.get(write.user) ?? new Map<string, string>();
    this.answered.set(write.user, answered.set(order.id, order.status));
    this.answeredAt.set(order.id, performance.now());
    if (write.op !== 'cancel') this.placed.push({ id: order.id, user: write.user });
    return 'same';
  }

  private items(random: () => number): LineItem[] {
    const products = sample(this.writes.products, 1 + Math.floor(random() * 3), random);
    return products.map((productId) => ({ productId, quantity: 1 + Math.floor(random() * 5) }));
  }
}

/** An order's lines as one comparable string, whatever their order. */
const lines = (items: WrittenOrder['items']) =>
  items
    .map((item) => `${item.product?.id}x${item.quantity}`)
    .sort()
    .join(',');

const pick = <T>(list: readonly T[], random: () => number): T => list[Math.floor(random() * list.length)]!;

/** Draws a workload's requests: a shape (or the writes) by weight, then one of its variants uniformly, or a key of its population. */
export function drawer(workload: Workload, random: () => number, writes?: OrderWrites): () => Draw {
  const weights = [...workload.shapes.map((shape) => shape.weight), workload.writes && writes ? workload.writes.weight : 0];
  const total = weights.reduce((sum, weight) => sum + weight, 0);
  return () => {
    let point = random() * total;
    let index = 0;
    while (index < weights.length - 1 && point >= weights[index]!) point -= weights[index++]!;
    if (index === workload.shapes.length) return { kind: 'write', write: writes!.next(random) };
    const shape = workload.shapes[index]!;
    return { kind: 'read', shape: index, variant: shape.population ? shape.population.draw(random) : Math.floor(random() * shape.variants.length) };
  };
}

/** What a response to one variant must be: its gateway's body before timing, or that body's stable part. */
export type Expectation = { exact: string } | { stable: string; project: (response: GraphQLResponse) => unknown };

export function expectationOf(shape: Shape, answer: string): Expectation {
  return shape.stable ? { stable: JSON.stringify(shape.stable(JSON.parse(answer) as GraphQLResponse)), project: shape.stable } : { exact: answer };
}

/** A response body as JSON; undefined when it is not JSON (a body that differs from any answer). */
function parsed(body: string): GraphQLResponse | undefined {
  try {
    return JSON.parse(body) as GraphQLResponse;
  } catch {
    return undefined;
  }
}

export function checkResponse(expectation: Expectation, body: string): Outcome {
  if ('exact' in expectation) return body === expectation.exact ? 'same' : 'differs';
  const response = parsed(body);
  if (!response) return 'differs';
  if (response.errors) return 'errors';
  return JSON.stringify(expectation.project(response)) === expectation.stable ? 'same' : 'differs';
}
