// Persisted documents at the edge (PERSISTED_QUERIES apq, audit or required), one plugin for every transport: it turns
// an id into its document before anything else reads the document.
import { createHash } from 'node:crypto';
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';
import { createInMemoryAPQStore, useAPQ, type APQStore } from '@graphql-yoga/plugin-apq';
import { usePersistedOperations } from '@graphql-yoga/plugin-persisted-operations';
import { ErrorCode, type Logger, type Redis, type Viewer } from '@ordergraph/core';
import { GraphQLError, getOperationAST, parse } from 'graphql';
import { createLRUCache, type GraphQLParams, type Plugin } from 'graphql-yoga';
import { Counter, type Registry } from 'prom-client';
import { declaredClient } from '../clients/identity.js';
import { viewerOf } from '../execution/operation.js';
import { servedBody, type PersistedManifest } from './manifest.js';
import { isConnected } from '../shared/shared-state.js';

const APQ_KEY_PREFIX = 'ordergraph:apq:';
/** Registered queries expire a day after their last registration; a client re-registers one it finds missing. */
const APQ_TTL_SECONDS = 24 * 60 * 60;

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
/** What a hash sent by a client must look like before it is looked up: anything else is simply not registered. */
const SHA256_HEX = /^[0-9a-f]{64}$/i;

/** Documents by hash this replica has seen, so that a known hash costs no Redis round trip. */
const LOCAL_APQ_ENTRIES = 1000;

/**
 * A Redis outage degrades to "not registered" (the client resends the query) instead of failing requests. A hash
 * names one document for good (it is checked against the text before registration), so a copy this process keeps
 * can never be stale; only the TTL of the shared entry is Redis's.
 */
function redisStore(redis: Redis, logger: Logger): APQStore {
  const local = createLRUCache<string>({ max: LOCAL_APQ_ENTRIES });
  return {
    get: async (hash) => {
      if (!SHA256_HEX.test(hash)) return null;
      const known = local.get(hash);
      if (known !== undefined || !isConnected(redis)) return known ?? null;
      const query = await redis.get(APQ_KEY_PREFIX + hash).catch((error: unknown) => {
        logger.warn({ err: error }, 'persisted query lookup failed');
        return null;
      });
      if (query !== null) local.set(hash, query);
      return query;
    },
    set: async (hash, query) => {
      local.set(hash, query);
      if (!isConnected(redis)) return;
      await redis.set(APQ_KEY_PREFIX + hash, query, 'EX', APQ_TTL_SECONDS).catch((error: unknown) => {
        logger.warn({ err: error }, 'persisted query registration failed');
      });
    },
  };
}

export const PERSISTED_QUERIES_MODES = ['apq', 'audit', 'required', 'allowlist'] as const;
export type PersistedQueriesMode = 'apq' | 'audit' | 'required';

/** `allowlist` is what `required` was called before the audit mode came. */
export const persistedQueriesMode = (setting: (typeof PERSISTED_QUERIES_MODES)[number]): PersistedQueriesMode =>
  setting === 'allowlist' ? 'required' : setting;

export interface PersistedDocumentsOptions {
  mode: PersistedQueriesMode;
  /** The trusted documents by id (an empty manifest when none is configured). */
  manifest: PersistedManifest;
  /** Whether ADMIN tokens may send any document in `required` mode. */
  adminBypass: boolean;
  redis: Redis | undefined;
  logger: Logger;
  registry: Registry;
}

type Params = GraphQLParams & { documentId?: unknown };
type ParamsPayload = Parameters<NonNullable<Plugin['onParams']>>[0];

const DOCUMENT_ID_MAX_LENGTH = 512;
/** Distinct unknown documents the audit mode remembers having logged, so a busy client logs each once, not per request. */
const AUDITED_DOCUMENTS = 1000;

const refusal = (message: string, code: string, status: number) => new GraphQLError(message, { extensions: { code, http: { status } } });
const badRequest = (message: string) => refusal(message, ErrorCode.BAD_REQUEST, 400);

/** `documentId` from a POST body (or a graphql-ws/graphql-sse payload), else from a GET's query string. */
function documentIdOf(params: Params, request: Request): string | undefined {
  let id = params.documentId;
  if (id == null && request.method === 'GET') id = new URL(request.url).searchParams.get('documentId') ?? undefined;
  if (id == null) return undefined;
  if (typeof id !== 'string' || id.length === 0 || id.length > DOCUMENT_ID_MAX_LENGTH) {
    throw badRequest(`documentId must be a string of 1 to ${DOCUMENT_ID_MAX_LENGTH} characters`);
  }
  return id;
}

function apqHashOf(params: Params): string | undefined {
  const persisted = params.extensions?.['persistedQuery'] as { version?: unknown; sha256Hash?: unknown } | undefined;
  return persisted?.version === 1 && typeof persisted.sha256Hash === 'string' ? persisted.sha256Hash : undefined;
}

/** The operation's name and type, for the audit log (undefined parts when the document does not say or parse). */
function describe(query: string, operationName: string | undefined) {
  try {
    const operation = getOperationAST(parse(query, { noLocation: true }), operationName);
    return { operationName: operation?.name?.value, operationType: operation?.operation };
  } catch {
    return { operationName, operationType: undefined };
  }
}

export function usePersistedDocuments(options: PersistedDocumentsOptions): GatewayPlugin {
  const { mode, manifest, logger } = options;
  const unknownDocuments = new Counter({
    name: 'gateway_unknown_documents_total',
    help: 'Operations whose document the persisted documents manifest does not hold: served (audit mode), refused, or sent by an admin (required mode)',
    labelNames: ['outcome'],
    registers: [options.registry],
  });
  for (const outcome of mode === 'audit' ? ['served'] : mode === 'required' ? ['refused', 'admin'] : []) unknownDocuments.inc({ outcome }, 0);
  const audited = createLRUCache<true>({ max: AUDITED_DOCUMENTS });

  // The manifest is served by the same plugin the runtime's `persistedDocuments` option installs
  // (@graphql-yoga/plugin-persisted-operations), added here rather than through that option: the option places it
  // before every plugin of ours (input limits, authentication's viewer, automatic persisted queries), so an APQ hash the
  // manifest lacks would be refused before our APQ store is asked, and the audit would not see what was served. That plugin hands allowArbitraryOperations the request alone; the viewer
  // (HTTP and WebSocket alike) is on the context, so it is kept by request (one request, one viewer, even in a batch).
  const viewers = new WeakMap<Request, Viewer>();
  const mayBypass = (request: Request) => options.adminBypass && viewers.get(request)?.role === 'ADMIN';
  /**
   * Registrations waiting for their request to execute: a registration is stored only once its document has passed
   * every check before execution (rate limits, operation limits, validation), as Apollo Server stores one only once it
   * has validated. A refused request (a flood of distinct registrations, nearly all 429) leaves nothing in the store,
   * here or in Redis, where each would have stayed for APQ_TTL_SECONDS.
   */
  const registrations = new WeakMap<Request, { hash: string; query: string }>();
  const store = options.redis ? redisStore(options.redis, logger) : createInMemoryAPQStore();
  const register = (request: Request | undefined) => {
    const registration = request && registrations.get(request);
    if (!registration) return;
    registrations.delete(request);
    // Not awaited: execution does not wait for the store; a lookup of the hash from this replica's next request follows
    // the SET on the same Redis connection. redisStore logs its own Redis failures; the catch keeps anything else (a
    // store that throws) from becoming an unhandled rejection.
    void Promise.resolve(store.set(registration.hash, registration.query)).catch((error: unknown) => logger.warn({ err: error }, 'persisted query registration failed'));
  };
  // Lookups by hash alone go through the plugin; a registration is checked here and stored by `register`.
  const lookups: APQStore = { get: (hash) => store.get(hash), set: () => {} };

  const apq = mode === 'required' ? undefined : useAPQ({ store: lookups, hash: sha256 });
  // Per-client safelists: an operation with a `clientName` is served only to requests declaring that client (by
  // header: a document cannot vouch for the client asking for it); to any other it is as if the manifest lacked it.
  const lookup = (id: string, request: Request) => servedBody(manifest.current(), id, declaredClient(request.headers)?.name);
  const trusted: Plugin = usePersistedOperations({
    getPersistedOperation: (id, request) => lookup(id, request),
    // documentIdOf below has checked documentId and put a GET's into the params.
    extractPersistedOperationId: (params) => ((params as Params).documentId as string | undefined) ?? apqHashOf(params) ?? null,
    allowArbitraryOperations: mode === 'required' ? mayBypass : true,
    customErrors: {
      notFound: { message: 'PersistedQueryNotFound', extensions: { code: ErrorCode.PERSISTED_QUERY_NOT_FOUND, http: { status: 404 } } },
      persistedQueryOnly: () => {
        unknownDocuments.inc({ outcome: 'refused' });
        return refusal(
          'Only persisted documents are allowed: send a documentId (or extensions.persistedQuery.sha256Hash) alone, without query text',
          ErrorCode.PERSISTED_QUERY_NOT_ALLOWED,
          400,
        );
      },
      keyNotFound: badRequest('Must provide query string or a persisted document id (documentId or extensions.persistedQuery.sha256Hash)'),
    },
  });

  /** Automatic persisted queries: registration (query and hash) or lookup (hash alone). */
  async function automatic(payload: ParamsPayload) {
    try {
      await apq!.onParams!(payload);
    } catch (error) {
      // Protocol version 1 answers an unknown hash with 200 (the client then sends the query); the plugin says 404.
      if (error instanceof GraphQLError && error.extensions['code'] === ErrorCode.PERSISTED_QUERY_NOT_FOUND) {
        throw new GraphQLError(error.message, { extensions: { code: ErrorCode.PERSISTED_QUERY_NOT_FOUND } });
      }
      throw error;
    }
    // The plugin has checked the query against its hash (a mismatch threw).
    const { query } = payload.params;
    const hash = apqHashOf(payload.params as Params);
    if (typeof query === 'string' && hash !== undefined) registrations.set(payload.request, { hash, query });
  }

  function audit(query: string, params: Params, request: Request, viewer: Viewer) {
    unknownDocuments.inc({ outcome: 'served' });
    const documentHash = sha256(query);
    if (audited.get(documentHash)) return;
    audited.set(documentHash, true);
    logger.warn(
      {
        event: 'unknown_document',
        persistedQueries: mode,
        documentHash,
        ...describe(query, params.operationName),
        clientName: declaredClient(request.headers)?.name,
        clientVersion: declaredClient(request.headers)?.version,
        userId: viewer?.userId,
      },
      'served a document the persisted documents manifest does not hold',
    );
  }

  const plugin: Plugin = {
    // Not async itself: a request with no persisted query (most, in apq mode) passes without a promise.
    onParams(payload) {
      const sent = payload.params as Params;
      const viewer = viewerOf(payload.context);
      viewers.set(payload.request, viewer);
      const documentId = documentIdOf(sent, payload.request);
      // An empty query is no query: graphql-ws and graphql-sse clients must send one, so an id comes with ''.
      const text = sent.query === '' ? undefined : sent.query;
      if (documentId !== undefined && text !== undefined) throw badRequest('Send a documentId or a query, not both');

      let params: Params = { ...sent, query: text, ...(documentId === undefined ? {} : { documentId }) };
      if (text === undefined) delete params.query;
      const setParams = (next: Params) => {
        params = next;
        payload.setParams(next);
      };
      setParams(params);
      const inner: ParamsPayload = { ...payload, params, setParams };

      const hash = documentId === undefined ? apqHashOf(params) : undefined;
      const resolved = apq && hash !== undefined && lookup(hash, payload.request) === null ? automatic(inner) : trusted.onParams!(inner);

      const judge = () => {
        const query = params.query;
        if (typeof query !== 'string' || manifest.current().bodies.has(query)) return;
        if (mode === 'audit') audit(query, params, payload.request, viewer);
        else if (mode === 'required') {
          // Only an administrator's document gets this far (anything else was refused above).
          unknownDocuments.inc({ outcome: 'admin' });
          logger.info({ event: 'unknown_document', persistedQueries: mode, documentHash: sha256(query), userId: viewer?.userId }, 'an administrator sent a document outside the manifest');
        }
      };
      return typeof (resolved as PromiseLike<void> | undefined)?.then === 'function' ? Promise.resolve(resolved).then(judge) : judge();
    },
    onParse: trusted.onParse,
    onValidate: trusted.onValidate,
    onExecute: ({ args }) => register((args.contextValue as { request?: Request }).request),
    onSubscribe: ({ args }) => register((args.contextValue as { request?: Request }).request),
    onDispose: () => manifest.close(),
  };
  return plugin as GatewayPlugin;
}
