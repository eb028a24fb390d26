// The service kit every subgraph runs on: Apollo Server + @apollo/subgraph behind express, with /healthz, /readyz,
// /metrics, request metrics, masked errors and graceful shutdown. Building and listening are separate steps.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApolloServer, type ApolloServerPlugin, type BaseContext } from '@apollo/server';
import { ApolloServerPluginDrainHttpServer } from '@apollo/server/plugin/drainHttpServer';
import { ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { expressMiddleware } from '@as-integrations/express5';
import { buildSubgraphSchema, type GraphQLResolverMap } from '@apollo/subgraph';
import express from 'express';
import { GraphQLError, parse, type GraphQLFormattedError } from 'graphql';
import type { Registry } from 'prom-client';
import { InvalidTokenError, createTokenVerifier, viewerFromHeader, type TokenVerifier, type Viewer } from './auth.js';
import { authSettings, shutdownSettings, type ShutdownSettings, type SubgraphConfig } from './config.js';
import { ErrorCode, createErrorMasker } from './errors.js';
import { REQUEST_ID_HEADER, currentRequest, requestIdFrom, withRequest, type Logger } from './logger.js';
import { createMetricsRegistry, datastoreOperationsCounter, graphqlRequestHistogram } from './metrics.js';
import type { Drainable } from './run.js';
import { instrumentDatabase, openDatabase, type DocumentDatabase } from './store/index.js';
import { serveSubgraphSubscriptions } from './subgraph-subscriptions.js';

export interface SubgraphServiceOptions<TContext extends BaseContext> {
  name: string;
  typeDefs: string;
  resolvers: unknown;
  resources: SubgraphResources;
  /** Builds the per-request context (loaders are made here, never shared across requests). */
  createContext(request: RequestIdentity): TContext | Promise<TContext>;
  /** Throws when a dependency besides the datastore (Redis, say) is unreachable. */
  checkReady?(): Promise<void>;
  /** Releases resources besides the datastore, after the HTTP server has drained and before the datastore closes. */
  close?(): Promise<void>;
  logger: Logger;
  /** Serve the schema's Subscription fields over graphql-ws at /graphql too. */
  subscriptions?: boolean;
}

/** Who sent a request: the verified viewer, and the credential to forward when the subgraph calls another. */
export interface RequestIdentity {
  viewer: Viewer;
  authorization: string | undefined;
}

/** What every subgraph sets up the same way from its configuration before it opens its own stores. */
export interface SubgraphResources {
  registry: Registry;
  /** The datastore, counting every operation in `datastore_operations_total`. */
  db: DocumentDatabase;
  verifyToken: TokenVerifier;
  production: boolean;
  shutdown: ShutdownSettings;
}

/**
 * Opens a subgraph's metrics registry, its datastore (MongoDB when MONGO_URL is set, else embedded; `database`
 * replaces it, for tests) and its token verifier.
 */
export async function openSubgraphResources(
  name: string,
  config: SubgraphConfig,
  logger: Logger,
  database?: DocumentDatabase,
): Promise<SubgraphResources> {
  const registry = createMetricsRegistry(name);
  const db = instrumentDatabase(
    database ??
      (await openDatabase({
        mongoUrl: config.MONGO_URL,
        database: config.MONGO_DB,
        dataDir: config.DATA_DIR,
        maxPoolSize: config.MONGO_MAX_POOL_SIZE,
        readPreference: config.MONGO_READ_PREFERENCE,
      })),
    datastoreOperationsCounter(registry),
  );
  const persisted = db.backend === 'mongodb' || (database === undefined && config.DATA_DIR !== undefined);
  logger.info(
    { backend: db.backend, ...(db.backend === 'embedded' && !database ? { dataDir: config.DATA_DIR ?? null } : {}) },
    persisted ? 'datastore opened: a restart keeps every acknowledged write' : 'datastore opened in memory: a restart loses every write',
  );
  return {
    registry,
    db,
    verifyToken: createTokenVerifier(authSettings(config)),
    production: config.NODE_ENV === 'production',
    shutdown: shutdownSettings(config),
  };
}

export interface SubgraphService extends Drainable {
  readonly name: string;
  /** Starts listening; resolves with the URL of the /graphql endpoint. */
  listen(port: number, host?: string): Promise<string>;
  /** Stops accepting, finishes in-flight requests (within SHUTDOWN_DRAIN_TIMEOUT), then releases resources. */
  stop(): Promise<void>;
}

/** Times every request, and logs it at debug level (an access log, with the request's ID like every line). */
function requestMetricsPlugin(registry: Registry, logger: Logger): ApolloServerPlugin {
  const histogram = graphqlRequestHistogram(registry);
  return {
    async requestDidStart() {
      const end = histogram.startTimer();
      return {
        async willSendResponse({ operationName, errors }) {
          const labels = { operation: operationName ?? 'anonymous', status: errors?.length ? 'error' : 'ok' };
          const seconds = end(labels);
          logger.debug({ ...labels, durationMs: Math.round(seconds * 1000) }, 'graphql request');
        },
      };
    },
  };
}

export async function createSubgraphService<TContext extends BaseContext>(
  options: SubgraphServiceOptions<TContext>,
): Promise<SubgraphService> {
  const { logger } = options;
  const { registry, verifyToken, production, db, shutdown } = options.resources;
  let draining = false;
  const app = express();
  // Every request runs with its ID (the gateway's, or the client's when well-formed, else a new one): in its log
  // lines, its response's header, its errors and the calls it makes to other subgraphs.
  app.use((req, res, next) => {
    const requestId = requestIdFrom(req.get(REQUEST_ID_HEADER));
    res.setHeader(REQUEST_ID_HEADER, requestId);
    withRequest(requestId, next);
  });
  const httpServer = http.createServer(app);
  const schema = buildSubgraphSchema([{ typeDefs: parse(options.typeDefs), resolvers: options.resolvers as GraphQLResolverMap<unknown> }]);
  const masked = createErrorMasker((error) => logger.error({ err: error }, 'internal error'));
  // Every error names the request's ID, so a client's report names the log lines to read.
  const formatError = (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    const result = masked(formatted, error);
    const requestId = currentRequest()?.requestId;
    return requestId ? { ...result, extensions: { ...result.extensions, requestId } } : result;
  };
  const subscriptions = options.subscriptions
    ? serveSubgraphSubscriptions({ ...options, registry, verifyToken, httpServer, path: '/graphql', schema, formatError })
    : undefined;
  const apollo = new ApolloServer<TContext>({
    schema,
    includeStacktraceInErrorResponses: false,
    hideSchemaDetailsFromClientErrors: production,
    formatError,
    // runProcess decides the shutdown order; Apollo's own handler would re-raise the signal after stopping.
    stopOnTerminationSignals: false,
    plugins: [
      ApolloServerPluginDrainHttpServer({ httpServer, stopGracePeriodMillis: shutdown.drainTimeoutMs }),
      // On stop, WebSocket clients are told 1001 (Going away) and their subscriptions released.
      ...(subscriptions ? [{ serverWillStart: async () => ({ drainServer: () => subscriptions.dispose() }) }] : []),
      requestMetricsPlugin(registry, logger),
      ...(production ? [ApolloServerPluginLandingPageDisabled()] : []),
    ],
    logger,
  });
  await apollo.start();

  app.use((_req, res, next) => {
    if (draining) res.setHeader('connection', 'close');
    next();
  });
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    if (draining) {
      res.status(503).json({ status: 'draining' });
      return;
    }
    try {
      await Promise.all([db.ping(), options.checkReady?.()]);
      res.json({ status: 'ready' });
    } catch (error) {
      logger.warn({ err: error }, 'not ready');
      res.status(503).json({ status: 'unavailable' });
    }
  });
  app.get('/metrics', async (_req, res) => {
    res.type(registry.contentType).send(await registry.metrics());
  });
  app.use(
    '/graphql',
    express.json({ limit: '1mb' }),
    expressMiddleware(apollo, {
      async context({ req }) {
        try {
          const authorization = req.headers.authorization;
          const viewer = await viewerFromHeader(verifyToken, authorization);
          return await options.createContext({ viewer, authorization });
        } catch (error) {
          if (!(error instanceof InvalidTokenError)) throw error;
          throw new GraphQLError(error.message, {
            extensions: { code: ErrorCode.UNAUTHENTICATED, http: { status: 401 } },
          });
        }
      },
    }),
  );

  return {
    name: options.name,
    shutdown,
    beginDrain() {
      draining = true;
    },
    listen(port, host = '0.0.0.0') {
      return new Promise((resolve, reject) => {
        httpServer.once('error', reject);
        httpServer.listen(port, host, () => {
          const address = httpServer.address() as AddressInfo;
          const url = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${address.port}/graphql`;
          logger.info({ url }, `${options.name} subgraph listening`);
          resolve(url);
        });
      });
    },
    async stop() {
      draining = true;
      await apollo.stop();
      await options.close?.();
      await db.close();
      logger.info(`${options.name} subgraph stopped`);
    },
  };
}
