// Boots the whole supergraph in-process on free ports: the three subgraphs, seeded, and the gateway composed from
// supergraph.yaml with the subgraphs' real URLs. Every request in the e2e suites goes over real HTTP.
import { createLogger, type DocumentDatabase, type SubgraphService } from '@ordergraph/common';
import { createCatalogService } from '@ordergraph/catalog';
import { loadCatalogConfig } from '@ordergraph/catalog/config';
import { createGateway, type Gateway } from '@ordergraph/gateway';
import { loadGatewayConfig } from '@ordergraph/gateway/config';
import { composeSupergraph, readSupergraphConfig, writeSupergraph } from '@ordergraph/gateway/supergraph';
import { supergraphFile } from '@ordergraph/gateway/supergraph-source';
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
  /** The supergraph SDL the gateway started with. */
  sdl: string;
  /** Sum of a subgraph's datastore operations so far (optionally of one collection or operation). */
  storeCalls(subgraph: SubgraphName, labels?: Record<string, string>): Promise<number>;
  /** Stops one subgraph, as an outage would; the gateway keeps routing to its URL. */
  stopSubgraph(subgraph: SubgraphName): Promise<void>;
  stop(): Promise<void>;
}

export interface SupergraphOptions {
  /** The orders subgraph's datastore, to share it with more orders instances (replicas.ts). */
  ordersDatabase?: DocumentDatabase;
  /** Extra environment for every process, for example NODE_ENV or limits. */
  env?: Record<string, string>;
  gatewayEnv?: Record<string, string>;
  /** Serve the supergraph from this file, re-read as a deployed gateway does, so a test can replace it (hot reload). */
  supergraphFile?: string;
}

export async function startSupergraph(options: SupergraphOptions = {}): Promise<Supergraph> {
  const env = { LOG_LEVEL: 'silent', SEED: 'true', ...options.env };
  const logger = (name: string) => createLogger(name, env.LOG_LEVEL);
  const started: { stop(): Promise<void> }[] = [];
  const stopped = new Set<{ stop(): Promise<void> }>();
  const services = new Map<string, SubgraphService>();
  const listen = async (service: SubgraphService | Gateway) => {
    started.push(service);
    if ('name' in service) services.set(service.name, service);
    return service.listen(0, '127.0.0.1');
  };
  const stopAll = async () => {
    for (const service of [...started].reverse()) if (!stopped.has(service)) await service.stop();
  };
  try {
    const catalog = await listen(await createCatalogService(loadCatalogConfig(env), logger('catalog')));
    const orders = await listen(
      await createOrdersService(loadOrdersConfig({ ...env, CATALOG_URL: catalog }), logger('orders'), { database: options.ordersDatabase }),
    );
    const users = await listen(
      await createUsersService(loadUsersConfig({ ...env, ORDERS_URL: orders, CATALOG_URL: catalog }), logger('users')),
    );
    const subgraphs = { users, orders, catalog };
    const sdl = composeSupergraph(readSupergraphConfig(), subgraphs);
    if (options.supergraphFile) writeSupergraph(options.supergraphFile, sdl);
    const supergraph = options.supergraphFile ? supergraphFile(options.supergraphFile, logger('gateway')) : sdl;
    const gatewayConfig = loadGatewayConfig({ ...env, ...options.gatewayEnv });
    const url = await listen(createGateway({ config: gatewayConfig, supergraph, logger: logger('gateway') }));
    return {
      url,
      subgraphs,
      sdl,
      storeCalls: (subgraph, labels = {}) =>
        readCounter(subgraphs[subgraph].replace('/graphql', '/metrics'), 'datastore_operations_total', labels),
      async stopSubgraph(name) {
        const service = services.get(name)!;
        stopped.add(service);
        await service.stop();
      },
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}
