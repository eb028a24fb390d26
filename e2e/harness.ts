// Boots the whole supergraph in-process on free ports: the three subgraphs, seeded, and the gateway (one or more
// replicas) composed from supergraph.yaml with the subgraphs' real URLs. Every request in the e2e suites goes over
// real HTTP.
import { createLogger, createRedis, type DocumentDatabase, type Redis, type SubgraphService } from '@ordergraph/common';
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
import { readCounter, startRedis, type TestRedis } from '@ordergraph/testkit';
import type { DestinationStream } from 'pino';

export type SubgraphName = 'users' | 'orders' | 'catalog';

export interface Supergraph {
  /** The gateway's /graphql URL. */
  url: string;
  /** Every gateway replica's /graphql URL (`url` is the first). */
  gatewayUrls: string[];
  subgraphs: Record<SubgraphName, string>;
  /** The supergraph SDL the gateway started with. */
  sdl: string;
  /** Sum of a subgraph's datastore operations so far (optionally of one collection or operation). */
  storeCalls(subgraph: SubgraphName, labels?: Record<string, string>): Promise<number>;
  /** GraphQL requests the subgraphs have received so far, all three together. */
  subgraphRequests(): Promise<number>;
  /** Stops one subgraph, as an outage would; the gateway keeps routing to its URL. */
  stopSubgraph(subgraph: SubgraphName): Promise<void>;
  /** The private Redis the gateways share (with `redis: true`); `client` reads it, `stop()`/`start()` cut it off. */
  redis: (TestRedis & { client: Redis }) | undefined;
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
  /** Gateway replicas to start in front of the same subgraphs. */
  gateways?: number;
  /** Where every process's log lines go (at env.LOG_LEVEL); stdout by default. */
  logs?: DestinationStream;
  /** Starts a private Redis and gives every gateway replica its REDIS_URL, so they share state through it. */
  redis?: boolean;
}

export async function startSupergraph(options: SupergraphOptions = {}): Promise<Supergraph> {
  const env = { LOG_LEVEL: 'silent', SEED: 'true', ...options.env };
  const logger = (name: string) => createLogger(name, env.LOG_LEVEL, options.logs);
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
    let redis: Supergraph['redis'];
    if (options.redis) {
      const server = await startRedis();
      redis = Object.assign(server, { client: createRedis(server.url, logger('redis')) });
      const client = redis.client;
      started.push({
        async stop() {
          client.disconnect();
          await server.close();
        },
      });
    }
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
    const gatewayConfig = loadGatewayConfig({ ...env, ...(redis ? { REDIS_URL: redis.url } : {}), ...options.gatewayEnv });
    const gatewayUrls: string[] = [];
    for (let i = 0; i < (options.gateways ?? 1); i++) {
      const supergraph = options.supergraphFile ? supergraphFile(options.supergraphFile, logger('gateway')) : sdl;
      gatewayUrls.push(await listen(createGateway({ config: gatewayConfig, supergraph, logger: logger('gateway') })));
    }
    return {
      url: gatewayUrls[0]!,
      gatewayUrls,
      subgraphs,
      sdl,
      redis,
      storeCalls: (subgraph, labels = {}) =>
        readCounter(subgraphs[subgraph].replace('/graphql', '/metrics'), 'datastore_operations_total', labels),
      subgraphRequests: async () => {
        const counts = Object.values(subgraphs).map((url) => readCounter(url.replace('/graphql', '/metrics'), 'graphql_request_duration_seconds_count'));
        return (await Promise.all(counts)).reduce((sum, count) => sum + count, 0);
      },
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
