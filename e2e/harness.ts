// Boots the whole supergraph in-process on free ports: the three subgraphs, seeded, and the gateway composed from
// supergraph.yaml with the subgraphs' real URLs. Every request in the e2e suites goes over real HTTP.
import { EmbeddedDatabase, createLogger, type DocumentDatabase, type SubgraphService } from '@ordergraph/common';
import { createCatalogService } from '@ordergraph/catalog';
import { loadCatalogConfig } from '@ordergraph/catalog/config';
import { createGateway, type Gateway } from '@ordergraph/gateway';
import { loadGatewayConfig } from '@ordergraph/gateway/config';
import { composeSupergraph, readSupergraphConfig } from '@ordergraph/gateway/supergraph';
import { createOrdersService } from '@ordergraph/orders';
import { loadOrdersConfig } from '@ordergraph/orders/config';
import { createUsersService } from '@ordergraph/users';
import { loadUsersConfig } from '@ordergraph/users/config';
import { readCounter } from '@ordergraph/testkit';

export type SubgraphName = 'users' | 'orders' | 'catalog';

export interface Supergraph {
  /** The gateway's /graphql URL. */
  url: string;
  subgraphs: Record<SubgraphName, string>;
  /** Sum of a subgraph's datastore operations so far (optionally of one collection or operation). */
  storeCalls(subgraph: SubgraphName, labels?: Record<string, string>): Promise<number>;
  /** Every gateway with the orders instance it routes to; the first is `url` with `subgraphs.orders`. */
  replicas: Replica[];
  stop(): Promise<void>;
}

export interface Replica {
  /** The gateway's /graphql URL. */
  url: string;
  /** The /graphql URL of the orders instance it routes to. */
  orders: string;
  /** Stops that orders instance, as a replica that goes away. */
  stopOrders(): Promise<void>;
  stopGateway(): Promise<void>;
}

export interface SupergraphOptions {
  /** Extra environment for every process, for example NODE_ENV or limits. */
  env?: Record<string, string>;
  gatewayEnv?: Record<string, string>;
  /**
   * Gateway + orders-subgraph pairs to run (default 1), as replicas of a scaled-out deployment: each gateway routes
   * orders to its own instance, and the orders instances share one datastore (and Redis, with REDIS_URL in `env`).
   */
  replicas?: number;
}

export async function startSupergraph(options: SupergraphOptions = {}): Promise<Supergraph> {
  const env = { LOG_LEVEL: 'silent', SEED: 'true', ...options.env };
  const logger = (name: string) => createLogger(name, env.LOG_LEVEL);
  const started: { stop(): Promise<void> }[] = [];
  /** Starts a service; the stop it returns is the one `stop()` runs too, and runs once however often called. */
  const launch = async (service: SubgraphService | Gateway) => {
    let stopped: Promise<void> | undefined;
    const stop = () => (stopped ??= service.stop());
    started.push({ stop });
    return { url: await service.listen(0, '127.0.0.1'), stop };
  };
  const listen = async (service: SubgraphService | Gateway) => (await launch(service)).url;
  try {
    const catalog = await listen(await createCatalogService(loadCatalogConfig(env), logger('catalog')));
    const replicaCount = options.replicas ?? 1;
    const database = replicaCount > 1 && !options.env?.['MONGO_URL'] ? sharedDatabase() : undefined;
    const ordersReplicas: { url: string; stop(): Promise<void> }[] = [];
    for (let i = 0; i < replicaCount; i++) {
      const config = loadOrdersConfig({ ...env, CATALOG_URL: catalog });
      ordersReplicas.push(await launch(await createOrdersService(config, logger('orders'), { database })));
    }
    const orders = ordersReplicas[0]!.url;
    const users = await listen(
      await createUsersService(loadUsersConfig({ ...env, ORDERS_URL: orders, CATALOG_URL: catalog }), logger('users')),
    );
    const subgraphs = { users, orders, catalog };
    const gatewayConfig = loadGatewayConfig({ ...env, ...options.gatewayEnv });
    const replicas: Replica[] = [];
    for (const ordersReplica of ordersReplicas) {
      const supergraph = composeSupergraph(readSupergraphConfig(), { ...subgraphs, orders: ordersReplica.url });
      const gateway = await launch(createGateway({ config: gatewayConfig, supergraph, logger: logger('gateway') }));
      replicas.push({ url: gateway.url, orders: ordersReplica.url, stopOrders: ordersReplica.stop, stopGateway: gateway.stop });
    }
    return {
      url: replicas[0]!.url,
      subgraphs,
      replicas,
      storeCalls: (subgraph, labels = {}) =>
        readCounter(subgraphs[subgraph].replace('/graphql', '/metrics'), 'datastore_operations_total', labels),
      async stop() {
        for (const service of started.reverse()) await service.stop();
      },
    };
  } catch (error) {
    for (const service of started.reverse()) await service.stop();
    throw error;
  }
}

/** One embedded datastore for every orders replica, as MongoDB would be; it outlives any one replica. */
function sharedDatabase(): DocumentDatabase {
  const database = new EmbeddedDatabase();
  return { backend: database.backend, ping: () => database.ping(), collection: (name, indexes) => database.collection(name, indexes), close: async () => {} };
}
