// Replicas of a scaled-out deployment, for the e2e suites: more orders instances, each behind a gateway of its own,
// sharing the supergraph's orders datastore and, with REDIS_URL set, its Redis; users and the catalog are shared too.
import { createLogger } from '@ordergraph/core';
import { EmbeddedDatabase, type DocumentDatabase } from '@ordergraph/store';
import { createGateway } from '@ordergraph/gateway';
import { loadGatewayConfig } from '@ordergraph/gateway/config';
import { composeSupergraph, readSupergraphConfig } from '@ordergraph/composition';
import { createOrdersService } from '@ordergraph/orders';
import { loadOrdersConfig } from '@ordergraph/orders/config';
import { startSupergraph, type Supergraph, type SupergraphOptions } from './supergraph.js';

export interface Replica {
  /** The gateway's /graphql URL. */
  url: string;
  /** The /graphql URL of the orders instance behind it. */
  orders: string;
  /** Stops that orders instance, as a replica that goes away (once, however often called). */
  stopOrders(): Promise<void>;
  stopGateway(): Promise<void>;
}

export interface Replicated {
  supergraph: Supergraph;
  replicas: Replica[];
  stop(): Promise<void>;
}

/** Stops `service` once, however often the returned function is called. */
function once(service: { stop(): Promise<void> }): () => Promise<void> {
  let stopped: Promise<void> | undefined;
  return () => (stopped ??= service.stop());
}

/** One embedded datastore for every orders instance; it outlives any one of them. */
function sharedDatabase(): DocumentDatabase {
  const database = new EmbeddedDatabase();
  return { backend: database.backend, ping: () => database.ping(), collection: (name, indexes) => database.collection(name, indexes), close: async () => {} };
}

export async function startReplicas(count: number, options: SupergraphOptions = {}): Promise<Replicated> {
  const ordersDatabase = options.env?.['MONGO_URL'] ? undefined : sharedDatabase();
  const supergraph = await startSupergraph({ ...options, ...(ordersDatabase ? { databases: { orders: ordersDatabase } } : {}) });
  const env = { LOG_LEVEL: 'silent', ...options.env };
  const replicas: Replica[] = [];
  const stops: (() => Promise<void>)[] = [];
  const stop = async () => {
    for (const stopOne of [...stops].reverse()) await stopOne();
    await supergraph.stop();
  };
  try {
    for (let i = 0; i < count; i++) {
      const config = loadOrdersConfig({ ...env, CATALOG_URL: supergraph.subgraphUrl('catalog') });
      const ordersService = await createOrdersService(config, createLogger('orders', env.LOG_LEVEL), { database: ordersDatabase });
      const stopOrders = once(ordersService);
      stops.push(stopOrders);
      const orders = await ordersService.listen(0, '127.0.0.1');
      const sdl = composeSupergraph(readSupergraphConfig(), { ...supergraph.subgraphs, orders });
      const gatewayConfig = loadGatewayConfig({ ...env, ...options.gatewayEnv });
      const gateway = createGateway({ config: gatewayConfig, supergraph: sdl, logger: createLogger('gateway', env.LOG_LEVEL) });
      const stopGateway = once(gateway);
      stops.push(stopGateway);
      replicas.push({ url: await gateway.listen(0, '127.0.0.1'), orders, stopOrders, stopGateway });
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { supergraph, replicas, stop };
}
