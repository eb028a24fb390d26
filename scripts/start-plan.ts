// What npm start runs, where: every port comes from the environment, and each process is told where the others are.
import { z } from 'zod';
import { loadConfig } from '@ordergraph/common';

const port = (fallback: number) => z.coerce.number().int().min(1).max(65535).default(fallback);

/** The gateway listens on PORT, as in its image; each subgraph on <NAME>_PORT (its own image's PORT default). */
const startEnvSchema = z.object({ PORT: port(4000), USERS_PORT: port(4001), ORDERS_PORT: port(4002), CATALOG_PORT: port(4003) });

export interface Launch {
  name: string;
  entry: string;
  port: number;
  env: Record<string, string>;
}

/** The subgraphs in start order (each needs only those before it), then the gateway. */
export function startPlan(env: NodeJS.ProcessEnv = process.env): { subgraphs: Launch[]; gateway: Launch } {
  const ports = loadConfig(startEnvSchema, env);
  const url = (port: number) => `http://127.0.0.1:${port}/graphql`;
  const [users, orders, catalog] = [url(ports.USERS_PORT), url(ports.ORDERS_PORT), url(ports.CATALOG_PORT)];
  return {
    subgraphs: [
      { name: 'catalog', entry: 'services/catalog/src/index.ts', port: ports.CATALOG_PORT, env: {} },
      { name: 'orders', entry: 'services/orders/src/index.ts', port: ports.ORDERS_PORT, env: { CATALOG_URL: catalog } },
      { name: 'users', entry: 'services/users/src/index.ts', port: ports.USERS_PORT, env: { ORDERS_URL: orders, CATALOG_URL: catalog } },
    ],
    gateway: {
      name: 'gateway',
      entry: 'gateway/src/index.ts',
      port: ports.PORT,
      env: { SUBGRAPH_USERS_URL: users, SUBGRAPH_ORDERS_URL: orders, SUBGRAPH_CATALOG_URL: catalog },
    },
  };
}
