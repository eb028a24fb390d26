// npm run bench:subscriptions: subscription fan-out across two replicas, every service in a process of its own (as
// deployed) on a shared Redis. N distinct ADMIN subscribers to newOrderCreated, half graphql-ws and half SSE, spread
// over both gateways; M createOrder mutations, ORDER_INTERVAL_MS apart, alternately through either gateway. Prints
// delivery latency from commit (the event's updatedAt) p50/p99/max, delivered/lost/duplicated/foreign events, CPU per
// delivered event of the gateways and of the orders instances, their RSS, and Redis connections. Settings:
// BENCH_SUBSCRIBERS (comma-separated N, default 100), BENCH_EVENTS (M, 50), BENCH_ORDER_INTERVAL_MS (200).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { toGlobalId } from '@ordergraph/common';
import { REPO_ROOT, composeSupergraph, readSupergraphConfig } from '@ordergraph/gateway/supergraph';
import { freePort, graphql, readCounter, sseClient, startRedis, token, wsClient } from '@ordergraph/testkit';
import { Redis } from 'ioredis';

const SUBSCRIBERS = (process.env['BENCH_SUBSCRIBERS'] ?? '100').split(',').map(Number);
const EVENTS = Number(process.env['BENCH_EVENTS'] ?? 50);
const ORDER_INTERVAL_MS = Number(process.env['BENCH_ORDER_INTERVAL_MS'] ?? 200);
const SUBSCRIPTION = `subscription { newOrderCreated { id updatedAt } }`;
const CREATE = `mutation ($items: [LineItemInput!]!) { createOrder(input: { items: $items }) { id } }`;

interface Service {
  name: string;
  url: string;
  child: ChildProcess;
}

const children: ChildProcess[] = [];
async function launch(name: string, entry: string, env: Record<string, string>): Promise<Service> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', entry], {
    cwd: REPO_ROOT,
    env: { ...process.env, LOG_LEVEL: 'error', SEED: 'true', PORT: String(port), HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  children.push(child);
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/readyz`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`${name} did not become ready`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return { name, url: `http://127.0.0.1:${port}/graphql`, child };
}

/** CPU time (user + system) of a process so far, in µs, from /proc (Linux). */
function cpuMicros(child: ChildProcess): number {
  const fields = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100; // utime, stime in clock ticks (100 Hz)
}
const rssMb = (child: ChildProcess) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))![1]) / 1024;
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
const metric = (url: string, name: string) => readCounter(url.replace(/\/graphql$/, '/metrics'), name);

const redis = await startRedis();
const stopAll = async () => {
  for (const child of children) child.kill('SIGTERM');
  await Promise.all(children.map((child) => (child.exitCode !== null ? undefined : new Promise((resolve) => child.once('exit', resolve)))));
  await redis.close();
};
try {
  const shared = { REDIS_URL: redis.url };
  const catalog = await launch('catalog', 'services/catalog/src/index.ts', {});
  const orders = [
    await launch('orders-a', 'services/orders/src/index.ts', { ...shared, CATALOG_URL: catalog.url }),
    await launch('orders-b', 'services/orders/src/index.ts', { ...shared, CATALOG_URL: catalog.url }),
  ];
  const users = await launch('users', 'services/users/src/index.ts', { ORDERS_URL: orders[0]!.url, CATALOG_URL: catalog.url });
  const supergraphPath = join(mkdtempSync(join(tmpdir(), 'ordergraph-bench-')), 'supergraph.graphql');
  writeFileSync(supergraphPath, composeSupergraph(readSupergraphConfig()));
  const gatewayEnv = { ...shared, SUPERGRAPH_PATH: supergraphPath, SUBGRAPH_USERS_URL: users.url, SUBGRAPH_CATALOG_URL: catalog.url, RATE_LIMIT_MAX: '100000000' };
  const gateways = [
    await launch('gateway-a', 'gateway/src/index.ts', { ...gatewayEnv, SUBGRAPH_ORDERS_URL: orders[0]!.url }),
    await launch('gateway-b', 'gateway/src/index.ts', { ...gatewayEnv, SUBGRAPH_ORDERS_URL: orders[1]!.url }),
  ];
  const writer = await token('ADMIN', 'user-0000');
  const probe = new Redis(redis.url);
  console.log(`node ${process.version}, ${EVENTS} events ${ORDER_INTERVAL_MS} ms apart, load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);

  for (const n of SUBSCRIBERS) {
    // Distinct identities: each subscriber its own token (lifetimes differ by a second).
    const tokens = await Promise.all(Array.from({ length: n }, (_, i) => token('ADMIN', 'user-0000', { expiresIn: 3600 + i })));
    const created = new Set<string>();
    const received = tokens.map(() => new Map<string, number>()); // per subscriber: event id -> deliveries
    const latencies: number[] = [];
    const failures: unknown[] = [];
    const subscribers = tokens.map((subscriberToken, i) => {
      const url = gateways[i % 2]!.url;
      const client = i % 4 < 2 ? wsClient(url, { token: subscriberToken }) : sseClient(url, { token: subscriberToken });
      const leave = client.subscribe({ query: SUBSCRIPTION } as never, {
        next: (result: unknown) => {
          const event = (result as { data?: { newOrderCreated?: { id: string; updatedAt: string } } }).data?.newOrderCreated;
          if (!event) return void failures.push(result);
          latencies.push(Date.now() - Date.parse(event.updatedAt));
          received[i]!.set(event.id, (received[i]!.get(event.id) ?? 0) + 1);
        },
        error: (error: unknown) => void failures.push(error),
        complete: () => {},
      });
      return { client, leave };
    });
    const open = async () => (await metric(orders[0]!.url, 'graphql_active_subscriptions')) + (await metric(orders[1]!.url, 'graphql_active_subscriptions'));
    while ((await open()) < n) await new Promise((resolve) => setTimeout(resolve, 250));
    const redisConnections = Number(/connected_clients:(\d+)/.exec(await probe.info('clients'))![1]) - 1;

    const cpuBefore = [...gateways, ...orders].map((service) => cpuMicros(service.child));
    for (let e = 0; e < EVENTS; e++) {
      const started = Date.now();
      const { body } = await graphql(gateways[e % 2]!.url, CREATE, {
        variables: { items: [{ productId: toGlobalId('Product', 'product-0001'), quantity: 1 }] },
        token: writer,
      });
      if (body.errors) throw new Error(JSON.stringify(body.errors));
      created.add(body.data!['createOrder'].id as string);
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, ORDER_INTERVAL_MS - (Date.now() - started))));
    }
    const expected = n * EVENTS;
    const settle = Date.now() + 30_000;
    while (latencies.length < expected && Date.now() < settle) await new Promise((resolve) => setTimeout(resolve, 250));
    const cpu = [...gateways, ...orders].map((service, i) => cpuMicros(service.child) - cpuBefore[i]!);

    let delivered = 0;
    let duplicated = 0;
    let foreign = 0;
    let lost = 0;
    for (const events of received) {
      for (const [id, count] of events) {
        if (!created.has(id)) foreign += count;
        else {
          delivered += 1;
          duplicated += count - 1;
        }
      }
      lost += [...created].filter((id) => !events.has(id)).length;
    }
    latencies.sort((a, b) => a - b);
    const gatewayCpu = cpu[0]! + cpu[1]!;
    const ordersCpu = cpu[2]! + cpu[3]!;
    console.log(
      `N=${n} (${n / 2} graphql-ws, ${n / 2} SSE, 2 replicas): delivered ${delivered}/${expected}, lost ${lost}, duplicated ${duplicated}, ` +
        `foreign ${foreign}, failures ${failures.length}; latency from commit p50 ${percentile(latencies, 50)} ms, ` +
        `p99 ${percentile(latencies, 99)} ms, max ${latencies.at(-1)} ms; CPU per delivered event: gateways ` +
        `${(gatewayCpu / delivered).toFixed(0)} µs, orders ${(ordersCpu / delivered).toFixed(0)} µs; RSS MB gateways ` +
        `${gateways.map((g) => rssMb(g.child).toFixed(0)).join('/')}, orders ${orders.map((o) => rssMb(o.child).toFixed(0)).join('/')}; ` +
        `Redis connections ${redisConnections}`,
    );
    for (const { client, leave } of subscribers) {
      leave();
      void client.dispose();
    }
  }
  probe.disconnect();
} finally {
  await stopAll();
}
