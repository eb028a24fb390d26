// Boots the whole supergraph in-process on free ports: every subgraph supergraph.yaml lists, seeded, and the gateway
// (one or more replicas) composed with their real URLs. Every request in the e2e suites goes over real HTTP.
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createLogger, createRedis, type Redis } from '@ordergraph/core';
import { type DocumentDatabase } from '@ordergraph/store';
import { type SubgraphModule, type SubgraphService } from '@ordergraph/subgraph-kit';
import { createGateway, type Gateway } from '@ordergraph/gateway';
import { loadGatewayConfig } from '@ordergraph/gateway/config';
import { composeSupergraph, envNameOf, readSupergraphConfig, writeSupergraph, type SubgraphSource } from '@ordergraph/composition';
import { supergraphFile } from '@ordergraph/gateway/supergraph-source';
import { readCounter } from './http.js';
import { freePort, startRedis, type TestRedis } from './redis.js';
import type { DestinationStream } from 'pino';

/** The SUBGRAPH_SIGNING_SECRET of supergraphs started in production mode (unless the test gives its own). */
export const TEST_SIGNING_SECRET = 'e2e-subgraph-signing-secret-000000000000';

export interface Supergraph {
  /** The gateway's /graphql URL. */
  url: string;
  /** Every gateway replica's /graphql URL (`url` is the first). */
  gatewayUrls: string[];
  /** Each subgraph's /graphql URL, by its name in supergraph.yaml. */
  subgraphs: Readonly<Record<string, string>>;
  /** One subgraph's /graphql URL; throws for a name supergraph.yaml does not list. */
  subgraphUrl(subgraph: string): string;
  /** The supergraph SDL the gateway started with. */
  sdl: string;
  /** Sum of a subgraph's datastore operations so far (optionally of one collection or operation). */
  storeCalls(subgraph: string, labels?: Record<string, string>): Promise<number>;
  /** GraphQL requests the subgraphs have received so far, all together. */
  subgraphRequests(): Promise<number>;
  /** Stops one subgraph, as an outage would; the gateway keeps routing to its URL. */
  stopSubgraph(subgraph: string): Promise<void>;
  /**
   * Stops gateway replica `index` (draining it as a deployment does) and starts a new one with the same settings on
   * the same port, as a restarted pod: its URL stays, what it held in memory is gone.
   */
  restartGateway(index: number): Promise<void>;
  /** The private Redis the gateways share (with `redis: true`); `client` reads it, `stop()`/`start()` cut it off. */
  redis: (TestRedis & { client: Redis }) | undefined;
  stop(): Promise<void>;
}

export interface SupergraphOptions {
  /** supergraph.yaml to start from: the repository's by default. */
  config?: string;
  /** Datastores by subgraph name, used instead of opening one (replicas.ts shares orders' with more instances). */
  databases?: Readonly<Record<string, DocumentDatabase>>;
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
  // Production requires a signing secret: its tests run signed, as a deployment does.
  const signing = options.env?.['NODE_ENV'] === 'production' ? { SUBGRAPH_SIGNING_SECRET: TEST_SIGNING_SECRET } : {};
  const env = { LOG_LEVEL: 'silent', SEED: 'true', ...signing, ...options.env };
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
    // Every subgraph is told where every other one listens (<NAME>_URL), so ports are chosen before any starts.
    const sources = readSupergraphConfig(options.config);
    const ports = await Promise.all(sources.map(() => freePort()));
    const subgraphs: Record<string, string> = Object.fromEntries(sources.map(({ name }, i) => [name, `http://127.0.0.1:${ports[i]}/graphql`]));
    const peers = Object.fromEntries(sources.map(({ name }) => [`${envNameOf(name)}_URL`, subgraphs[name]!]));
    for (const [i, source] of sources.entries()) {
      const { subgraph } = await subgraphModule(source);
      const service = await subgraph.create(subgraph.loadConfig({ ...env, ...peers }), logger(source.name), { database: options.databases?.[source.name] });
      started.push(service);
      services.set(source.name, service);
      await service.listen(ports[i]!, '127.0.0.1');
    }
    const sdl = composeSupergraph(sources, subgraphs);
    if (options.supergraphFile) writeSupergraph(options.supergraphFile, sdl);
    const gatewayConfig = loadGatewayConfig({ ...env, ...(redis ? { REDIS_URL: redis.url } : {}), ...options.gatewayEnv });
    const newGateway = () => {
      const supergraph = options.supergraphFile ? supergraphFile(options.supergraphFile, logger('gateway')) : sdl;
      return createGateway({ config: gatewayConfig, supergraph, logger: logger('gateway') });
    };
    const gateways: Gateway[] = [];
    const gatewayUrls: string[] = [];
    for (let i = 0; i < (options.gateways ?? 1); i++) {
      const gateway = newGateway();
      gateways.push(gateway);
      gatewayUrls.push(await listen(gateway));
    }
    return {
      url: gatewayUrls[0]!,
      gatewayUrls,
      subgraphs,
      subgraphUrl(name) {
        const url = subgraphs[name];
        if (!url) throw new Error(`supergraph.yaml lists no subgraph ${name}`);
        return url;
      },
      sdl,
      redis,
      storeCalls: (subgraph, labels = {}) =>
        readCounter(subgraphs[subgraph]!.replace('/graphql', '/metrics'), 'datastore_operations_total', labels),
      subgraphRequests: async () => {
        const counts = Object.values(subgraphs).map((url) => readCounter(url.replace('/graphql', '/metrics'), 'graphql_request_duration_seconds_count'));
        return (await Promise.all(counts)).reduce((sum, count) => sum + count, 0);
      },
      async stopSubgraph(name) {
        const service = services.get(name)!;
        stopped.add(service);
        await service.stop();
      },
      async restartGateway(index) {
        const running = gateways[index];
        if (!running) throw new Error(`no gateway replica ${index} (${gateways.length} started)`);
        stopped.add(running);
        await running.stop();
        const restarted = newGateway();
        gateways[index] = restarted;
        started.push(restarted);
        await restarted.listen(Number(new URL(gatewayUrls[index]!).port), '127.0.0.1');
      },
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

/** A subgraph's builder: the server module beside the schema file supergraph.yaml names for it. */
function subgraphModule(source: SubgraphSource): Promise<{ subgraph: SubgraphModule<unknown> }> {
  return import(pathToFileURL(join(dirname(source.schemaPath), 'server.ts')).href) as Promise<{ subgraph: SubgraphModule<unknown> }>;
}
