// npm start's plan (every port from the environment, each process pointed at the others' ports) and what it prints.
import { describe, expect, it } from 'vitest';
import { ConfigError } from '@ordergraph/common';
import { loadCatalogConfig } from '@ordergraph/catalog/config';
import { loadGatewayConfig } from '@ordergraph/gateway/config';
import { loadOrdersConfig } from '@ordergraph/orders/config';
import { loadUsersConfig } from '@ordergraph/users/config';
import { startPlan } from '../scripts/start-plan.js';
import { processProgress, storeMode, summaryBox } from '../scripts/start-report.js';

const portsOf = (plan: ReturnType<typeof startPlan>) => Object.fromEntries([...plan.subgraphs, plan.gateway].map(({ name, port }) => [name, port]));

describe('npm start', () => {
  it("listens on each image's default port when nothing is set", () => {
    const plan = startPlan({});
    expect(portsOf(plan)).toEqual({
      catalog: loadCatalogConfig({}).PORT,
      orders: loadOrdersConfig({}).PORT,
      users: loadUsersConfig({}).PORT,
      gateway: loadGatewayConfig({}).PORT,
    });
  });

  it('moves every process with PORT and <NAME>_PORT, and tells the others where they went', () => {
    const plan = startPlan({ PORT: '5000', USERS_PORT: '5001', ORDERS_PORT: '5002', CATALOG_PORT: '5003' });
    expect(portsOf(plan)).toEqual({ catalog: 5003, orders: 5002, users: 5001, gateway: 5000 });
    const env = Object.fromEntries([...plan.subgraphs, plan.gateway].map(({ name, env }) => [name, env]));
    // Each process reads these through its own validated configuration.
    expect(loadOrdersConfig(env['orders']!).CATALOG_URL).toBe('http://127.0.0.1:5003/graphql');
    expect(loadUsersConfig(env['users']!)).toMatchObject({ ORDERS_URL: 'http://127.0.0.1:5002/graphql', CATALOG_URL: 'http://127.0.0.1:5003/graphql' });
    expect(loadGatewayConfig(env['gateway']!)).toMatchObject({
      SUBGRAPH_USERS_URL: 'http://127.0.0.1:5001/graphql',
      SUBGRAPH_ORDERS_URL: 'http://127.0.0.1:5002/graphql',
      SUBGRAPH_CATALOG_URL: 'http://127.0.0.1:5003/graphql',
    });
  });

  it('refuses a port that is not one, naming the variable', () => {
    expect(() => startPlan({ ORDERS_PORT: 'http' })).toThrow(ConfigError);
    expect(() => startPlan({ ORDERS_PORT: '70000' })).toThrow(/ORDERS_PORT/);
  });
});

describe('what npm start prints', () => {
  it('names the store mode and what a restart does to the data', () => {
    expect(storeMode({})).toMatchObject({ label: 'embedded, in memory', restart: expect.stringContaining('a restart loses every write') });
    expect(storeMode({ DATA_DIR: '/var/ordergraph' })).toMatchObject({ label: 'embedded, kept in /var/ordergraph', restart: expect.stringContaining('keeps every write') });
    expect(storeMode({ DATA_DIR: '/var/ordergraph', MONGO_URL: 'mongodb://db' }).label).toBe('MongoDB (MONGO_URL)');
  });

  it('prints a line per process as it starts and as it becomes ready or fails', () => {
    const lines: string[] = [];
    const progress = processProgress('orders', 4002, (line) => lines.push(line));
    progress.ready();
    processProgress('users', 4001, (line) => lines.push(line)).failed('exited (1)');
    expect(lines).toEqual([
      expect.stringMatching(/^ {2}… {2}orders {3}starting on :4002$/),
      expect.stringMatching(/^ {2}✓ {2}orders {3}ready on :4002 in \d+\.\d s$/),
      expect.stringMatching(/^ {2}… {2}users {4}starting on :4001$/),
      expect.stringMatching(/^ {2}✗ {2}users {4}failed after \d+\.\d s: exited \(1\)$/),
    ]);
  });

  it('ends with one box holding the URLs, whole tokens and the modes', () => {
    const token = `eyJ${'a'.repeat(300)}`;
    const box = summaryBox({
      url: 'http://localhost:4000/graphql',
      graphiql: true,
      tokens: [{ label: 'USER token', token }],
      store: storeMode({}),
      redis: 'redis://127.0.0.1:6379',
    });
    const lines = box.split('\n');
    expect(new Set(lines.map((line) => line.length)).size).toBe(1);
    expect(lines[0]).toMatch(/^╭─+╮$/);
    expect(lines.at(-1)).toMatch(/^╰─+╯$/);
    for (const text of ['GraphQL   http://localhost:4000/graphql', 'GraphiQL  http://localhost:4000/graphql', token, 'embedded, in memory', 'a restart loses every write', 'redis://127.0.0.1:6379']) {
      expect(lines.some((line) => line.includes(text))).toBe(true);
    }
    expect(summaryBox({ url: 'u', graphiql: false, tokens: [], store: storeMode({}), redis: 'r' })).not.toContain('GraphiQL');
  });
});
