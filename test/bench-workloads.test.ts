// The varied scenarios of npm run bench (bench/workloads.ts, bench/scenarios.ts): each request draws its own variant,
// and each response is checked against that variant's answer, not against one body for all.
import { describe, expect, it } from 'vitest';
import { DEFAULT_SCENARIOS, selectScenarios } from '../bench/gateways-options.js';
import { SCENARIOS, isVaried, type VariedScenario } from '../bench/scenarios.js';
import { OrderWrites, checkResponse, drawer, expectationOf, sample, seededRandom, uniformDraw, writeBody, zipfDraw, type Draw, type Shape, type Write } from '../bench/workloads.js';

const scenario = (id: string) => SCENARIOS.find((s) => s.id === id) as VariedScenario;
const bodyOf = (workload: VariedScenario['workload'], draw: Draw) =>
  draw.kind === 'read' ? JSON.stringify({ query: workload.shapes[draw.shape]!.query, variables: workload.shapes[draw.shape]!.variants[draw.variant] }) : writeBody(draw.write);

describe('drawing keys from the whole data set', () => {
  const counts = (draw: (random: () => number) => number, n: number) => {
    const random = seededRandom(7);
    const seen = new Map<number, number>();
    for (let i = 0; i < n; i++) {
      const key = draw(random);
      seen.set(key, (seen.get(key) ?? 0) + 1);
    }
    return [...seen.entries()].sort((a, b) => b[1] - a[1]);
  };

  it('by Zipf: the key of rank k drawn in proportion to 1 / k^s, the hot keys spread over the data set', () => {
    const size = 10_000;
    const drawn = counts(zipfDraw(size, 1.1, 3), 200_000);
    let harmonic = 0;
    for (let k = 1; k <= size; k++) harmonic += 1 / k ** 1.1;
    // Ranks 1 and 2 hold 1/H and 2^-1.1/H of the draws.
    expect(drawn[0]![1] / 200_000).toBeCloseTo(1 / harmonic, 2);
    expect(drawn[1]![1] / 200_000).toBeCloseTo(2 ** -1.1 / harmonic, 2);
    expect(drawn.every(([key]) => key >= 0 && key < size && Number.isInteger(key))).toBe(true);
    // Not the first keys: the seed's first records are special.
    expect(drawn.slice(0, 10).some(([key]) => key >= 100)).toBe(true);
    // The same keys for the same seeds.
    expect(counts(zipfDraw(size, 1.1, 3), 1000)).toEqual(counts(zipfDraw(size, 1.1, 3), 1000));
  });

  it('uniformly: every key about as often', () => {
    const drawn = counts(uniformDraw(100), 100_000);
    expect(drawn).toHaveLength(100);
    expect(drawn[0]![1] / drawn.at(-1)![1]).toBeLessThan(1.3);
  });

  it.each(['h', 'i', 'j'])('(%s) draws from every user, product and order of the data set, and scales with SEED_SCALE', (id) => {
    const { workload, atScale } = scenario(id);
    const large = atScale!(10);
    expect(workload.shapes.map((shape) => shape.population!.size)).toEqual([200, 99, 1000]);
    expect(large.shapes.map((shape) => shape.population!.size)).toEqual([2000, 999, 10_000]);
    const next = drawer(large, seededRandom(1), large.writes ? new OrderWrites(large.writes) : undefined);
    const reads = Array.from({ length: 5000 }, next).filter((draw) => draw.kind === 'read');
    for (const draw of reads) expect(draw.variant).toBeLessThan(large.shapes[draw.shape]!.population!.size);
    // Beyond the keys of scale 1.
    expect(reads.some((draw) => draw.variant >= workload.shapes[draw.shape]!.population!.size)).toBe(true);
    // The variants checked before timing are keys the load draws.
    for (const shape of large.shapes) expect(shape.variants).toEqual(shape.population!.sample.map((key) => shape.population!.variables(key)));
  });
});

describe('drawing variants', () => {
  it.each(['d', 'e', 'f', 'g'])('(%s) sends requests with different arguments, from the whole sample', (id) => {
    const { workload } = scenario(id);
    const next = drawer(workload, seededRandom(1), workload.writes ? new OrderWrites(workload.writes) : undefined);
    const bodies = Array.from({ length: 2000 }, () => bodyOf(workload, next()));
    const distinct = new Set(bodies).size;
    // One identical request would be 1; (d) has 99 users, (e) and (f) 200 orders and products.
    expect(distinct).toBeGreaterThanOrEqual(90);
    expect(Math.max(...[...bodies.reduce((counts, body) => counts.set(body, (counts.get(body) ?? 0) + 1), new Map<string, number>()).values()])).toBeLessThan(100);
  });

  it("(d) to (f) draw from the seed: (d) every user but the administrator, (f) every product, anonymously; (d) and (e) as ADMIN", () => {
    const users = scenario('d').workload.shapes[0]!;
    expect(users.variants).toHaveLength(99);
    expect(users.viewer).toBe('ADMIN');
    expect(scenario('e').workload.shapes[0]!.viewer).toBe('ADMIN');
    expect(scenario('f').workload.shapes[0]!).toMatchObject({ viewer: 'ANONYMOUS' });
    expect(scenario('f').workload.shapes[0]!.variants).toHaveLength(200);
  });

  it('(g) mixes its shapes and writes at their weights', () => {
    const { workload } = scenario('g');
    const next = drawer(workload, seededRandom(2), new OrderWrites(workload.writes!));
    const counts = new Map<string, number>();
    const draws = 20_000;
    for (let i = 0; i < draws; i++) {
      const draw = next();
      const name = draw.kind === 'read' ? workload.shapes[draw.shape]!.name : 'writes';
      counts.set(name, (counts.get(name) ?? 0) + 1);
    }
    const total = workload.shapes.reduce((sum, shape) => sum + shape.weight, workload.writes!.weight);
    for (const [name, weight] of [...workload.shapes.map((shape) => [shape.name, shape.weight] as const), ['writes', workload.writes!.weight] as const]) {
      expect((counts.get(name) ?? 0) / draws).toBeCloseTo(weight / total, 1);
    }
  });

  it('samples a fixed subset, the same for the same seed, in the order of the list', () => {
    const list = Array.from({ length: 1000 }, (_, i) => i);
    const first = sample(list, 50, seededRandom(7));
    expect(first).toEqual(sample(list, 50, seededRandom(7)));
    expect(new Set(first).size).toBe(50);
    expect([...first].sort((a, b) => a - b)).toEqual(first);
    expect(sample([1, 2], 50, seededRandom(7))).toEqual([1, 2]);
  });
});

describe("checking a response against its variant's answer", () => {
  const shape: Shape = { name: 'product by id', weight: 1, query: 'query', viewer: 'ANONYMOUS', variants: [{ id: 'a' }, { id: 'b' }] };
  const answers = ['{"data":{"product":{"id":"a","name":"Red Lamp"}}}', '{"data":{"product":{"id":"b","name":"Blue Lamp"}}}'];
  const expectations = answers.map((answer) => expectationOf(shape, answer));

  it("takes a variant's own answer and refuses another variant's", () => {
    expect(checkResponse(expectations[0]!, answers[0]!)).toBe('same');
    expect(checkResponse(expectations[1]!, answers[1]!)).toBe('same');
    expect(checkResponse(expectations[0]!, answers[1]!)).toBe('differs');
    expect(checkResponse(expectations[1]!, answers[0]!)).toBe('differs');
  });

  it("compares only the stable part of a shape the writes change: (g)'s users keep their names, their orders move", () => {
    const users = scenario('g').workload.shapes.find((s) => s.name === 'user with orders')!;
    const order = (id: string, status: string) => ({ id, status, total: 10, createdAt: 'x', user: { name: 'Ada' }, items: [{ quantity: 1, unitPrice: 10, subtotal: 10, product: { name: 'Red Lamp', price: 10 } }] });
    const answer = (name: string, orders: unknown[]) => JSON.stringify({ data: { user: { name, email: 'ada@example.com', orders } } });
    const expectation = expectationOf(users, answer('Ada', [order('o1', 'PENDING')]));
    expect(checkResponse(expectation, answer('Ada', [order('o9', 'PENDING'), order('o1', 'CANCELLED')]))).toBe('same');
    expect(checkResponse(expectation, answer('Grace', [order('o1', 'PENDING')]))).toBe('differs');
    expect(checkResponse(expectation, answer('Ada', [{ ...order('o1', 'PENDING'), user: { name: 'Grace' } }]))).toBe('differs');
    expect(checkResponse(expectation, JSON.stringify({ errors: [{ message: 'boom' }], data: null }))).toBe('errors');
    // Without a stable part, a response that moved is a differing body.
    expect(checkResponse(expectationOf({ ...users, stable: undefined }, answer('Ada', [order('o1', 'PENDING')])), answer('Ada', []))).toBe('differs');
  });
});

describe("(g)'s writes", () => {
  const writes = { weight: 5, users: ['user-0001', 'user-0002', 'user-0003'], products: ['p1', 'p2', 'p3', 'p4'] };
  const answerTo = (write: Write, id: string, status?: string) => {
    const field = { create: 'createOrder', update: 'updateOrder', cancel: 'cancelOrder' }[write.op];
    const items = 'items' in write ? write.items.map((item) => ({ quantity: item.quantity, product: { id: item.productId } })) : [];
    return JSON.stringify({ data: { [field]: { id, status: status ?? (write.op === 'cancel' ? 'CANCELLED' : 'PENDING'), items } } });
  };

  it('places an order first, then changes or cancels only orders placed, as their owner, never one already in flight', () => {
    const orders = new OrderWrites(writes);
    const random = seededRandom(3);
    const first = orders.next(random);
    expect(first.op).toBe('create');
    expect(orders.settle(first, answerTo(first, 'order-1'))).toBe('same');
    const owners = new Map([['order-1', first.user]]);
    const inFlight = new Set<string>();
    let changes = 0;
    for (let i = 0; i < 200; i++) {
      const write = orders.next(random);
      if (write.op === 'create') {
        const id = `order-${i + 2}`;
        owners.set(id, write.user);
        expect(orders.settle(write, answerTo(write, id))).toBe('same');
        continue;
      }
      changes++;
      expect(owners.get(write.orderId)).toBe(write.user);
      expect(inFlight.has(write.orderId)).toBe(false);
      inFlight.add(write.orderId);
      // Half of the answers arrive at once; the others' orders stay out of the pool.
      if (i % 2 === 0) {
        expect(orders.settle(write, answerTo(write, write.orderId))).toBe('same');
        inFlight.delete(write.orderId);
      }
    }
    expect(changes).toBeGreaterThan(20);
  });

  it('refuses an answer with other lines, another order, the wrong status or errors', () => {
    const orders = new OrderWrites(writes);
    const create: Write = { op: 'create', user: 'user-0001', items: [{ productId: 'p1', quantity: 2 }] };
    expect(orders.settle(create, answerTo({ ...create, items: [{ productId: 'p1', quantity: 3 }] }, 'o1'))).toBe('differs');
    expect(orders.settle(create, answerTo(create, 'o1', 'CANCELLED'))).toBe('differs');
    expect(orders.settle({ op: 'cancel', user: 'user-0001', orderId: 'o1' }, answerTo({ op: 'cancel', user: 'user-0001', orderId: 'o2' }, 'o2'))).toBe('differs');
    expect(orders.settle(create, JSON.stringify({ errors: [{ message: 'no' }] }))).toBe('errors');
  });
});

describe("(g)'s reads of a user's orders", () => {
  const writes = { weight: 5, users: ['user-0001'], products: ['p1'] };
  const list = (...orders: [string, string][]) => JSON.stringify({ data: { user: { orders: orders.map(([id, status]) => ({ id, status })) } } });

  const answer = (write: Write, id: string, status: string) =>
    JSON.stringify({ data: { [`${write.op}Order`]: { id, status, items: 'items' in write ? write.items.map((item) => ({ quantity: item.quantity, product: { id: item.productId } })) : [] } } });

  it('must show every write of that user answered before they were sent, unless a write of theirs is in flight', () => {
    const orders = new OrderWrites(writes);
    const random = seededRandom(4);
    expect(orders.expectedOrders('user-0001')?.expected).toEqual(new Map());
    const create = orders.next(random);
    expect(orders.expectedOrders('user-0001')).toBeUndefined();
    expect(orders.settle(create, answer(create, 'o1', 'PENDING'))).toBe('same');
    const read = orders.expectedOrders('user-0001')!;
    expect(orders.check(read, list(['o1', 'PENDING'], ['seeded', 'SHIPPED']), 20)).toBe('same');
    expect(orders.check(read, list(['seeded', 'SHIPPED']), 20)).toBe('stale');
    expect(orders.check(read, list(['o1', 'CANCELLED']), 20)).toBe('stale');
    expect(orders.describeStale(read, list(['o1', 'CANCELLED']), 20, performance.now())).toMatch(/^user-0001: order o1 answered PENDING [\d.]+ ms before the read was sent, which showed CANCELLED \(1 orders listed\)$/);
    // A full page may have left it out; it may never show it otherwise than answered.
    expect(orders.check(read, list(['seeded', 'SHIPPED']), 1)).toBe('same');
    const cancel: Write = { op: 'cancel', user: 'user-0001', orderId: 'o1' };
    expect(orders.settle(cancel, answer(cancel, 'o1', 'CANCELLED'))).toBe('same');
    expect(orders.check(orders.expectedOrders('user-0001')!, list(['o1', 'PENDING']), 20)).toBe('stale');
  });

  it('does not hold a read to what a write of theirs sent after it may have overtaken', () => {
    const orders = new OrderWrites(writes);
    const random = seededRandom(4);
    const create = orders.next(random);
    orders.settle(create, answer(create, 'o1', 'PENDING'));
    const read = orders.expectedOrders('user-0001')!;
    // A write sent while the read is on its way, answered before or after the read: the read may show it.
    let write = orders.next(random);
    while (write.op === 'create') write = (orders.settle(write, answer(write, 'o2', 'PENDING')), orders.next(random));
    expect(orders.check(read, list(['o1', 'CANCELLED']), 20)).toBe('same');
    const answered = write.op === 'cancel' ? 'CANCELLED' : 'PENDING';
    expect(orders.settle(write, answer(write, write.orderId, answered))).toBe('same');
    expect(orders.check(read, list(['o1', 'CANCELLED']), 20)).toBe('same');
    // A read sent after that write was answered is held to it again.
    const later = orders.expectedOrders('user-0001')!;
    const others = [...later.expected.keys()].filter((id) => id !== write.orderId).map((id): [string, string] => [id, 'PENDING']);
    expect(orders.check(later, list([write.orderId, answered], ...others), 20)).toBe('same');
    expect(orders.check(later, list([write.orderId, answered === 'CANCELLED' ? 'PENDING' : 'CANCELLED'], ...others), 20)).toBe('stale');
  });
});

describe('--scenarios', () => {
  it('runs (d), (g) and the size scenarios by default, in list order with each workload that writes after the reads it shares answers with, and refuses an unknown id', () => {
    expect(DEFAULT_SCENARIOS).toEqual(expect.arrayContaining(['d', 'g', 'h', 'i', 'j']));
    expect(selectScenarios('g,d').map((s) => s.id)).toEqual(['d', 'g']);
    const writing = SCENARIOS.filter((s) => isVaried(s) && s.workload.writes).map((s) => s.id);
    expect(writing).toEqual(['g', 'j']);
    expect(SCENARIOS.at(-1)!.id).toBe('j');
    // Every read-only scenario before (g): Grafbase's own subgraphs see other writes than the others'.
    const g = SCENARIOS.findIndex((s) => s.id === 'g');
    expect(SCENARIOS.slice(g + 1).every((s) => isVaried(s) && (s.workload.writes || !s.workload.shapes.some((shape) => shape.query.includes('orders('))))).toBe(true);
    expect(() => selectScenarios('a,z')).toThrow(/no scenario z/);
  });

  it('titles the scenarios that send one request from every connection as identical requests', () => {
    for (const s of SCENARIOS) expect(s.name.startsWith('identical request')).toBe(!isVaried(s));
  });
});
