// The service kit every subgraph runs on: Apollo Server + @apollo/subgraph on Node's own HTTP server, with /healthz,
// /readyz, /metrics, request metrics, masked errors and graceful shutdown. Building and listening are separate steps.
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApolloServer, HeaderMap, type ApolloServerPlugin, type BaseContext } from '@apollo/server';
import { ApolloServerPluginDrainHttpServer } from '@apollo/server/plugin/drainHttpServer';
import { ApolloServerPluginInlineTraceDisabled, ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { buildSubgraphSchema, type GraphQLResolverMap } from '@apollo/subgraph';
import { GraphQLError, parse, type GraphQLFormattedError } from 'graphql';
import Negotiator from 'negotiator';
import type { Registry } from 'prom-client';
import {
  ErrorCode,
  INVALIDATION_EXTENSION,
  InvalidTokenError,
  REQUEST_ID_HEADER,
  authSettings,
  createMetricsRegistry,
  createTokenVerifier,
  currentRequest,
  datastoreOperationsCounter,
  declaredInvalidations,
  graphqlRequestHistogram,
  requestIdFrom,
  shutdownSettings,
  signingSecret,
  viewerFromHeader,
  withRequest,
  type Drainable,
  type Logger,
  type RequestIdentity,
  type ShutdownSettings,
  type SubgraphConfig,
  type TokenVerifier,
} from '@ordergraph/core';
import { instrumentDatabase, openDatabase, type DocumentDatabase } from '@ordergraph/store';
import { cacheControlPlugins } from './cache-control.js';
import { createErrorMasker } from './error-masking.js';
import { isSignedWith, unsignedRequest } from './signature.js';
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

/** What every subgraph sets up the same way from its configuration before it opens its own stores. */
export interface SubgraphResources {
  registry: Registry;
  /** The datastore, counting every operation in `datastore_operations_total`. */
  db: DocumentDatabase;
  verifyToken: TokenVerifier;
  production: boolean;
  shutdown: ShutdownSettings;
  /** Set (always in production): only operations signed with it are served, and calls to other subgraphs are signed. */
  signingSecret: string | undefined;
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
    signingSecret: signingSecret(config),
  };
}

/** What a subgraph's builder may be handed instead of opening it itself: tests share or break a datastore this way. */
export interface SubgraphDeps {
  database?: DocumentDatabase | undefined;
}

/**
 * Every subgraph's server.ts exports one as `subgraph`, under the same names in each, so the test kit starts any
 * subgraph supergraph.yaml lists the same way.
 */
export interface SubgraphModule<Config = never> {
  /** Its settings by name (its zod object schema): the deployment files give it these and no others. */
  envSchema: { readonly shape: object };
  loadConfig(env?: NodeJS.ProcessEnv): Config;
  create(config: Config, logger?: Logger, deps?: SubgraphDeps): Promise<SubgraphService>;
}

export interface SubgraphService extends Drainable {
  readonly name: string;
  /** Starts listening; resolves with the URL of the /graphql endpoint. */
  listen(port: number, host?: string): Promise<string>;
  /** Stops accepting, finishes in-flight requests (within SHUTDOWN_DRAIN_TIMEOUT), then releases resources. */
  stop(): Promise<void>;
}

/**
 * What every request does besides Apollo Server's own work, in one plugin (each plugin's hooks are awaited once per
 * stage of every request): times it and logs it at debug level (an access log, with the request's ID like every
 * line); names its response's media type, negotiated once per distinct Accept header (responseTypeFor); and puts what
 * a write declared it changed (`declareInvalidation`, nothing for a mutation that declared nothing) into its response's
 * extensions, where the gateway's entity cache reads it (Apollo Router's subgraph invalidation format).
 */
function requestPlugin(registry: Registry, logger: Logger): ApolloServerPlugin {
  const histogram = graphqlRequestHistogram(registry);
  return {
    async requestDidStart({ request, response }) {
      const end = histogram.startTimer();
      const type = responseTypeFor(request.http?.headers.get('accept'));
      if (type) response.http.headers.set('content-type', type);
      return {
        async willSendResponse({ operationName, operation, errors, response }) {
          const labels = { operation: operationName ?? 'anonymous', status: errors?.length ? 'error' : 'ok' };
          const seconds = end(labels);
          if (logger.isLevelEnabled('debug')) logger.debug({ ...labels, durationMs: Math.round(seconds * 1000) }, 'graphql request');
          // A mutation always says what it changed, nothing included (it failed before committing, or changed
          // nothing): the gateway drops every type of a subgraph whose write says nothing.
          const declared = declaredInvalidations();
          if ((!declared?.length && operation?.operation !== 'mutation') || response.body.kind !== 'single') return;
          const result = response.body.singleResult;
          result.extensions = { ...result.extensions, [INVALIDATION_EXTENSION]: declared ?? [] };
        },
      };
    },
  };
}

/** A call's body may be this large, as with express.json before. */
const MAX_BODY_BYTES = 1024 * 1024;
const PROBES = new Set(['/healthz', '/readyz', '/metrics']);

const single = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value[0] : value);
/** application/json, with parameters or without: what express.json read. */
const isJson = (contentType: string | undefined) => contentType !== undefined && /^application\/json\s*(;|$)/i.test(contentType);

/** The media types Apollo Server answers one result in (its MEDIA_TYPES, but the subscription callback's), in its order. */
const RESULT_MEDIA_TYPES = ['application/json', 'application/graphql-response+json'];
const negotiated = new Map<string, string | undefined>();

/** The Content-Type Apollo Server gives a single result (its chooseContentTypeForSingleResultResponse), among these. */
const RESPONSE_MEDIA_TYPES = ['application/json; charset=utf-8', 'application/graphql-response+json; charset=utf-8', 'application/json; callbackSpec=1.0; charset=utf-8'];
const responseTypes = new Map<string, string | null>();

/**
 * The Content-Type Apollo Server would choose for a single result, for the Accept header it is handed: chosen here
 * once per distinct header, and set on the response before Apollo's turn, which it then leaves as it is (it negotiates
 * anew for every request otherwise). None, for a header accepting none of them: Apollo answers that with its 406.
 */
function responseTypeFor(accept: string | undefined): string | null {
  if (!accept) return RESPONSE_MEDIA_TYPES[0]!;
  let type = responseTypes.get(accept);
  if (type === undefined) {
    if (responseTypes.size >= 64) responseTypes.clear();
    responseTypes.set(accept, (type = new Negotiator({ headers: { accept } }).mediaType(RESPONSE_MEDIA_TYPES) ?? null));
  }
  return type;
}

/**
 * The one media type a POST's Accept header chooses, to hand Apollo Server in its place. Apollo negotiates each
 * request's Accept twice with negotiator, which parses every type offered again for every range accepted: 10 % of the
 * users subgraph's CPU under the benchmark's (d), with the gateway's three ranges. Each distinct header is negotiated
 * here once, among the same types in the same order, so Apollo chooses the same from the one range left. The
 * multipart ranges only serve @defer and @stream, which graphql 16 does not execute; a header naming the subscription
 * callback's type, or accepting none, goes to Apollo as it is.
 */
function negotiatedAccept(accept: string): string {
  if (!negotiated.has(accept)) {
    if (negotiated.size >= 64) negotiated.clear();
    negotiated.set(accept, accept.includes('callbackSpec') ? undefined : new Negotiator({ headers: { accept } }).mediaType(RESULT_MEDIA_TYPES));
  }
  return negotiated.get(accept) ?? accept;
}

function sendJson(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(value);
  res.writeHead(status, { ...headers, 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(res.req.method === 'HEAD' ? undefined : text);
}

/**
 * The request's body as UTF-8 text; 'too large' once it is over `limit` bytes (the rest is not read: the refusal closes
 * the connection), 'aborted' when the client went away first.
 */
function readBody(req: IncomingMessage, limit: number): Promise<string | 'too large' | 'aborted'> {
  if (Number(req.headers['content-length'] ?? 0) > limit) return Promise.resolve('too large');
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let length = 0;
    const onData = (chunk: Buffer) => {
      length += chunk.length;
      if (length <= limit) return void chunks.push(chunk);
      req.off('data', onData).pause();
      resolve('too large');
    };
    req.on('data', onData);
    req.once('end', () => resolve(Buffer.concat(chunks, length).toString('utf8')));
    // After 'end' these change nothing: a promise settles once.
    req.once('error', () => resolve('aborted'));
    req.once('close', () => resolve('aborted'));
  });
}

export async function createSubgraphService<TContext extends BaseContext>(
  options: SubgraphServiceOptions<TContext>,
): Promise<SubgraphService> {
  const { logger } = options;
  const { registry, verifyToken, production, db, shutdown, signingSecret } = options.resources;
  let draining = false;
  // Every request runs with its ID (the gateway's, or the client's when well-formed, else a new one): in its log
  // lines, its response's header, its errors and the calls it makes to other subgraphs.
  const httpServer = http.createServer((req, res) => {
    const requestId = requestIdFrom(single(req.headers[REQUEST_ID_HEADER]));
    res.setHeader(REQUEST_ID_HEADER, requestId);
    if (draining) res.setHeader('connection', 'close');
    withRequest(requestId, () => {
      route(req, res).catch((error: unknown) => {
        logger.error({ err: error }, 'internal error');
        if (res.headersSent) res.destroy();
        else refuse(res, 500, ErrorCode.INTERNAL_SERVER_ERROR, 'Internal server error');
      });
    });
  });
  const schema = buildSubgraphSchema([{ typeDefs: parse(options.typeDefs), resolvers: options.resolvers as GraphQLResolverMap<unknown> }]);
  const masked = createErrorMasker((error) => logger.error({ err: error }, 'internal error'));
  // Every error names the request's ID, so a client's report names the log lines to read.
  const formatError = (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    const result = masked(formatted, error);
    const requestId = currentRequest()?.requestId;
    return requestId ? { ...result, extensions: { ...result.extensions, requestId } } : result;
  };
  const subscriptions = options.subscriptions
    ? serveSubgraphSubscriptions({ ...options, registry, verifyToken, httpServer, path: '/graphql', schema, formatError, signingSecret })
    : undefined;
  const apollo = new ApolloServer<TContext>({
    schema,
    includeStacktraceInErrorResponses: false,
    // With a signing secret, every request Apollo Server sees is a signed POST of JSON (serveGraphQL refuses the
    // rest), which its CSRF check always lets through: a browser cannot send one unasked.
    csrfPrevention: signingSecret === undefined,
    hideSchemaDetailsFromClientErrors: production,
    formatError,
    // runProcess decides the shutdown order; Apollo's own handler would re-raise the signal after stopping.
    stopOnTerminationSignals: false,
    plugins: [
      ApolloServerPluginDrainHttpServer({ httpServer, stopGracePeriodMillis: shutdown.drainTimeoutMs }),
      // On stop, WebSocket clients are told 1001 (Going away) and their subscriptions released.
      ...(subscriptions ? [{ serverWillStart: async () => ({ drainServer: () => subscriptions.dispose() }) }] : []),
      requestPlugin(registry, logger),
      ...cacheControlPlugins(),
      // Federated tracing (ftv1) is for Apollo's usage reporting, which nothing here asks for; enabled, it builds a
      // trace tree for every request before it even reads whether the caller asked for one.
      ApolloServerPluginInlineTraceDisabled(),
      ...(production ? [ApolloServerPluginLandingPageDisabled()] : []),
    ],
    logger,
  });
  await apollo.start();

  /** An HTTP-level refusal, as a GraphQL error with its code (and the request's ID, as every error has). */
  const refuse = (res: ServerResponse, status: number, code: ErrorCode, message: string, headers: Record<string, string> = {}) => {
    const error = formatError({ message, extensions: { code } }, undefined);
    sendJson(res, status, { errors: [error] }, headers);
  };

  const ready = async (res: ServerResponse) => {
    if (draining) return sendJson(res, 503, { status: 'draining' });
    try {
      await Promise.all([db.ping(), options.checkReady?.()]);
      sendJson(res, 200, { status: 'ready' });
    } catch (error) {
      logger.warn({ err: error }, 'not ready');
      sendJson(res, 503, { status: 'unavailable' });
    }
  };

  const context = async (authorization: string | undefined): Promise<TContext> => {
    try {
      const viewer = await viewerFromHeader(verifyToken, authorization);
      return await options.createContext({ viewer, authorization });
    } catch (error) {
      if (!(error instanceof InvalidTokenError)) throw error;
      throw new GraphQLError(error.message, { extensions: { code: ErrorCode.UNAUTHENTICATED, http: { status: 401 } } });
    }
  };

  // What @as-integrations/express5 did, without express (docs/design.md, "Subgraphs on Node's own HTTP server", says what that saves): Apollo Server is
  // handed the request's method, headers, query string and parsed JSON body, and its answer is written as it comes.
  const serveGraphQL = async (req: IncomingMessage, res: ServerResponse, search: string) => {
    let body: unknown;
    if (req.method === 'POST' && isJson(req.headers['content-type'])) {
      const encoding = req.headers['content-encoding'];
      if (encoding !== undefined && encoding !== 'identity') return refuse(res, 415, ErrorCode.UNSUPPORTED_MEDIA_TYPE, `Unsupported content encoding: ${encoding}`);
      const text = await readBody(req, MAX_BODY_BYTES);
      if (text === 'aborted') return;
      if (text === 'too large') return refuse(res, 413, ErrorCode.PAYLOAD_TOO_LARGE, `Request body over ${MAX_BODY_BYTES} bytes`, { connection: 'close' });
      try {
        body = text === '' ? {} : JSON.parse(text);
      } catch {
        return refuse(res, 400, ErrorCode.BAD_REQUEST, 'Request body is not valid JSON');
      }
    }
    // Only the gateway's signed operations (and other subgraphs' signed calls) reach Apollo Server when a signing
    // secret is set: a direct call, `_service` and `_entities` included, is refused before anything reads it.
    if (signingSecret && !(req.method === 'POST' && isSignedWith(signingSecret, body))) {
      logger.warn({ method: req.method }, 'refused a request the gateway did not sign');
      const { message, extensions } = formatError(unsignedRequest().toJSON(), undefined);
      return sendJson(res, 403, { errors: [{ message, extensions }] });
    }
    const headers = new HeaderMap();
    if (signingSecret) {
      // A signed POST: of its headers, Apollo Server reads only these two (the CSRF check, which reads others, is off).
      for (const name of ['accept', 'content-type'] as const) if (req.headers[name] !== undefined) headers.set(name, req.headers[name]);
    } else {
      for (const [name, value] of Object.entries(req.headers)) if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    }
    const accept = headers.get('accept');
    if (req.method === 'POST' && accept) headers.set('accept', negotiatedAccept(accept));
    const response = await apollo.executeHTTPGraphQLRequest({
      httpGraphQLRequest: { method: req.method!.toUpperCase(), headers, search, body },
      context: () => context(single(req.headers.authorization)),
    });
    for (const [name, value] of response.headers) res.setHeader(name, value);
    res.statusCode = response.status ?? 200;
    if (response.body.kind === 'complete') {
      res.end(response.body.string);
      return;
    }
    for await (const chunk of response.body.asyncIterator) res.write(chunk);
    res.end();
  };

  const route = async (req: IncomingMessage, res: ServerResponse) => {
    const url = req.url ?? '/';
    const query = url.indexOf('?');
    const path = query === -1 ? url : url.slice(0, query);
    if (path === '/graphql') return serveGraphQL(req, res, query === -1 ? '' : url.slice(query));
    const probe = PROBES.has(path) && (req.method === 'GET' || req.method === 'HEAD');
    if (!probe) return refuse(res, 404, ErrorCode.NOT_FOUND, `Nothing at ${req.method} ${path}`);
    if (path === '/healthz') return sendJson(res, 200, { status: 'ok' });
    if (path === '/readyz') return ready(res);
    res.setHeader('content-type', registry.contentType);
    res.end(await registry.metrics());
  };

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
