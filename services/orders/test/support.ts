// Test support: the orders (and catalog) subgraphs on free ports, and seeded orders handed out one test at a time.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { toGlobalId } from '@ordergraph/core';
import { seedData, type SeedOrder, type SeedOrderStatus } from '@ordergraph/seed';
import { createOrdersService } from '../src/server.js';
import { loadOrdersConfig } from '../src/config.js';

/** A port nothing listens on: a catalog that is down. */
export const UNREACHABLE_CATALOG_URL = 'http://127.0.0.1:9/graphql';

export interface Running {
  url: string;
  metricsUrl: string;
  stop(): Promise<void>;
}

async function listen(service: { listen(port: number, host: string): Promise<string>; stop(): Promise<void> }): Promise<Running> {
  const url = await service.listen(0, '127.0.0.1');
  return { url, metricsUrl: url.replace(/\/graphql$/, '/metrics'), stop: () => service.stop() };
}

/** The orders subgraph, seeded, on the embedded store; `env` adds settings (REDIS_URL, say). */
export async function startOrders(catalogUrl = UNREACHABLE_CATALOG_URL, env: Record<string, string> = {}): Promise<Running> {
  const config = loadOrdersConfig({ NODE_ENV: 'test', LOG_LEVEL: 'silent', SEED: 'true', CATALOG_URL: catalogUrl, ...env });
  return listen(await createOrdersService(config));
}

/**
 * The real catalog subgraph, seeded, on the embedded store, in a process of its own as deployed: orders depends on
 * the catalog's API, never on its code (so the orders image does not carry the catalog).
 */
export async function startCatalog(): Promise<Running> {
  const entry = fileURLToPath(new URL('../../catalog/src/index.ts', import.meta.url));
  const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', entry], {
    env: { ...process.env, NODE_ENV: 'test', LOG_LEVEL: 'info', SEED: 'true', PORT: '0', HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // The catalog logs one JSON line with its URL once it listens.
  const url = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      const url = (JSON.parse(line) as { url?: string }).url;
      if (url) resolve(url);
    });
    void exited.then(() => reject(new Error('the catalog subgraph exited before listening')));
  });
  return {
    url,
    metricsUrl: url.replace(/\/graphql$/, '/metrics'),
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

export const orderGlobalId = (order: SeedOrder) => toGlobalId('Order', order.localId);
export const productGlobalId = (localId: string) => toGlobalId('Product', localId);
export const ADMIN_LOCAL_ID = 'user-0000';

/**
 * Seeded orders, each handed out once, so tests that change one never disturb another. Orders of `reservedUsers`
 * are never handed out: tests may read those users' orders as seeded.
 */
export function seededOrders(reservedUsers: readonly string[] = []) {
  const taken = new Set<string>();
  return {
    take(status: SeedOrderStatus): SeedOrder {
      const order = seedData().orders.find(
        (candidate) => candidate.status === status && !taken.has(candidate.localId) && !reservedUsers.includes(candidate.userLocalId),
      );
      if (!order) throw new Error(`no seeded ${status} order left`);
      taken.add(order.localId);
      return order;
    },
    /** Some ordinary user who does not own `order`. */
    strangerTo(order: SeedOrder): string {
      return order.userLocalId === 'user-0002' ? 'user-0003' : 'user-0002';
    },
  };
}
