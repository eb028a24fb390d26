// Memory per record of the embedded store: seeds one subgraph's part of the data set at SEED_SCALE into an in-memory
// store, as the service does, and prints the memory it holds per record (documents and every index: the heap and the
// typed arrays outside it), with the time it took. Run with --expose-gc: `node --expose-gc --conditions=source --import tsx scripts/store-memory.ts [users|orders|catalog]`.
// With DATA_DIR set, the store is kept there (as the service keeps it): the first run journals and snapshots the seed,
// a second run finds the data there, loads it instead of seeding, and prints the time that took.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DirectoryPersistence, EmbeddedDatabase } from '@ordergraph/store';
import { ProductStore } from '../services/catalog/src/store/products.js';
import { seedProducts } from '../services/catalog/src/seed.js';
import { OrderStore } from '../services/orders/src/store/orders.js';
import { seedOrders } from '../services/orders/src/seed.js';
import { UserStore } from '../services/users/src/store/users.js';
import { seedUsers } from '../services/users/src/seed.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');
const scale = Number(process.env['SEED_SCALE'] ?? '100');
const parts = process.argv.slice(2).length > 0 ? process.argv.slice(2) : ['users', 'catalog', 'orders'];

/** The process's peak resident set so far (VmHWM), in MiB. */
const peakRss = () => Number(/^VmHWM:\s+(\d+) kB/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? NaN) / 1024;

/** What the store can hold: the JS heap and the typed arrays its columns and indexes keep outside it. */
const heap = () => {
  gc();
  gc();
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return heapUsed + arrayBuffers;
};

for (const part of parts) {
  const before = heap();
  const dataDir = process.env['DATA_DIR'] ? join(process.env['DATA_DIR'], part) : undefined;
  const db = new EmbeddedDatabase(dataDir ? new DirectoryPersistence(dataDir) : undefined);
  const started = performance.now();
  const count =
    part === 'users'
      ? await seedUsers(await UserStore.open(db), scale)
      : part === 'orders'
        ? await seedOrders(await OrderStore.open(db), scale)
        : await seedProducts(await ProductStore.open(db), scale);
  // A first query places every document in its indexes, as the first request would.
  if (part === 'orders') await (await OrderStore.open(db)).findByUserIds(['VXNlcjp1c2VyLTAwMDE'], 1);
  if (part === 'users') await (await UserStore.open(db)).list({ role: 'USER' }, { limit: 1, offset: 0 });
  if (part === 'catalog') await (await ProductStore.open(db)).list({ limit: 1, offset: 0 });
  const seconds = (performance.now() - started) / 1000;
  const held = heap() - before;
  if (count === 0) {
    const loaded = part === 'users' ? await (await UserStore.open(db)).count(null) : part === 'orders' ? await db.collection('orders', []).then((c) => c.count({})) : await db.collection('products', []).then((c) => c.count({}));
    console.log(`${part}: ${loaded.toLocaleString('en')} records loaded from ${dataDir} in ${seconds.toFixed(1)} s, ${(held / 2 ** 20).toFixed(1)} MiB held, ${Math.round(held / loaded)} bytes per record; RSS now ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB, peak ${peakRss().toFixed(0)} MiB`);
    await db.close();
    continue;
  }
  console.log(
    `${part}: ${count.toLocaleString('en')} records at SEED_SCALE=${scale}, seeded in ${seconds.toFixed(1)} s, ` +
      `${(held / 2 ** 20).toFixed(1)} MiB held, ${Math.round(held / count)} bytes per record (document and indexes); ` +
      `RSS now ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB, peak ${peakRss().toFixed(0)} MiB`,
  );
  if (process.env['STORE_MEMORY_DETAIL']) {
    const { heapTotal, heapUsed, external, arrayBuffers } = process.memoryUsage();
    const mib = (n: number) => `${(n / 2 ** 20).toFixed(0)}`;
    console.log(`  heapTotal ${mib(heapTotal)} heapUsed ${mib(heapUsed)} external ${mib(external)} arrayBuffers ${mib(arrayBuffers)} MiB`);
    for (const space of (await import('node:v8')).getHeapSpaceStatistics()) console.log(`  ${space.space_name}: size ${mib(space.space_size)} used ${mib(space.space_used_size)} available ${mib(space.space_available_size)}`);
  }
  await db.close();
}
