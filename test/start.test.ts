// npm start's plan: every port from the environment, and each process pointed at the others' ports.
import { describe, expect, it } from 'vitest';
import { ConfigError } from '@ordergraph/common';
import { loadCatalogConfig } from '@ordergraph/catalog/config';
import { loadGatewayConfig } from '@ordergraph/gateway/config';
import { loadOrdersConfig } from '@ordergraph/orders/config';
import { loadUsersConfig } from '@ordergraph/users/config';
import { startPlan } from '../scripts/start-plan.js';

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
