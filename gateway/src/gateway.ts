// Builds the gateway: Hive Gateway serving the composed supergraph at /graphql, with the edge plugins, one file per
// concern. Does not listen on its own; index.ts (or a test) calls listen().
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createGatewayRuntime } from '@graphql-hive/gateway-runtime';
import { INTERNAL_ERROR_MESSAGE, authSettings, createMetricsRegistry, createTokenVerifier, type Logger } from '@ordergraph/common';
import { useAuthentication } from './auth.js';
import { subgraphUrlOverrides, type GatewayConfig } from './config.js';
import { edgePlugins } from './edge.js';
import { useMetrics } from './metrics.js';
import { openSharedState } from './shared-state.js';

export interface GatewayOptions {
  config: GatewayConfig;
  /** The supergraph SDL to serve. */
  supergraph: string;
  logger: Logger;
}

export interface Gateway {
  listen(port: number, host?: string): Promise<string>;
  stop(): Promise<void>;
}

export function createGateway({ config, supergraph, logger }: GatewayOptions): Gateway {
  const production = config.NODE_ENV === 'production';
  const registry = createMetricsRegistry('gateway');
  const verify = createTokenVerifier(authSettings(config));
  const transportEntries = Object.fromEntries(
    Object.entries(subgraphUrlOverrides(config)).map(([name, location]) => [name, { location }]),
  );

  const shared = openSharedState(config.REDIS_URL, logger, production);
  const endpoints = { graphqlEndpoint: '/graphql', readinessEndpoint: '/readyz' };
  const edge = edgePlugins({ config, redis: shared.redis, logger, ...endpoints });

  const runtime = createGatewayRuntime({
    supergraph,
    transportEntries,
    graphqlEndpoint: endpoints.graphqlEndpoint,
    healthCheckEndpoint: '/healthz',
    readinessCheckEndpoint: endpoints.readinessEndpoint,
    landingPage: !production,
    graphiql: !production,
    logging: config.LOG_LEVEL === 'silent' ? false : config.LOG_LEVEL === 'trace' ? 'debug' : config.LOG_LEVEL === 'fatal' ? 'error' : config.LOG_LEVEL,
    // Identity flows to the subgraphs as the caller's own bearer token, which they verify themselves.
    propagateHeaders: {
      fromClientToSubgraphs: ({ request }) => {
        const authorization = request.headers.get('authorization');
        return authorization ? { authorization } : {};
      },
    },
    plugins: () => [useMetrics(registry), useAuthentication(verify), ...edge],
    // Unexpected failures reach clients as the generic INTERNAL_SERVER_ERROR, never with a stack, in every mode.
    maskedErrors: { isDev: false, errorMessage: INTERNAL_ERROR_MESSAGE },
  });

  const server = http.createServer(runtime);
  return {
    async listen(port, host = '0.0.0.0') {
      await shared.connected();
      return new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          const { port: bound } = server.address() as AddressInfo;
          const url = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${bound}/graphql`;
          logger.info({ url }, 'gateway listening');
          resolve(url);
        });
      });
    },
    async stop() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      await runtime.dispose();
      await shared.close();
      logger.info('gateway stopped');
    },
  };
}
