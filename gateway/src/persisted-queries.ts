// Persisted queries, `apq` (protocol version 1, in Redis so every replica knows a hash) or `allowlist` (an Apollo
// manifest's operations only), on every transport; the hash is swapped for its document, which is then checked as any.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';
import { createInMemoryAPQStore, useAPQ, type APQStore } from '@graphql-yoga/plugin-apq';
import { usePersistedOperations } from '@graphql-yoga/plugin-persisted-operations';
import { ConfigError, ErrorCode, type Logger, type Redis } from '@ordergraph/core';
import { GraphQLError } from 'graphql';
import { createLRUCache, type GraphQLParams, type Plugin } from 'graphql-yoga';
import { z } from 'zod';
import { isConnected } from './shared-state.js';

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

type OnParams = NonNullable<Plugin['onParams']>;
type ParamsPayload = Parameters<OnParams>[0];

/** An empty `query` next to a persisted-query hash is the hash alone: the form graphql-ws and graphql-sse can send. */
function hashAlone(payload: ParamsPayload): ParamsPayload {
  const { query, ...params } = payload.params as GraphQLParams;
  if (query !== '' || !params.extensions?.['persistedQuery']) return payload;
  payload.setParams(params);
  return { ...payload, params };
}

export function useAutomaticPersistedQueries(redis: Redis | undefined, logger: Logger): GatewayPlugin {
  const apq = useAPQ({ store: redis ? redisStore(redis, logger) : createInMemoryAPQStore(), hash: sha256 });
  const plugin: Plugin = {
    async onParams(payload) {
      try {
        await apq.onParams?.(hashAlone(payload));
      } catch (error) {
        // Protocol version 1 answers an unknown hash with 200 (the client then sends the query); the plugin says 404.
        if (error instanceof GraphQLError && error.extensions['code'] === ErrorCode.PERSISTED_QUERY_NOT_FOUND) {
          throw new GraphQLError(error.message, { extensions: { code: ErrorCode.PERSISTED_QUERY_NOT_FOUND } });
        }
        throw error;
      }
    },
  };
  return plugin as GatewayPlugin;
}

// Apollo's persisted-query manifest (the format `generate-persisted-query-manifest` writes).
const manifestSchema = z.object({
  format: z.literal('apollo-persisted-query-manifest'),
  version: z.literal(1),
  operations: z.array(
    z.object({
      id: z.string(),
      body: z.string(),
      name: z.string().optional(),
      type: z.enum(['query', 'mutation', 'subscription']).optional(),
    }),
  ),
});

/** Reads a manifest: its operations by ID. Fails start-up when the file is malformed or an ID is not its body's hash. */
export function readPersistedQueryManifest(path: string): Map<string, string> {
  let manifest: z.output<typeof manifestSchema>;
  try {
    manifest = manifestSchema.parse(JSON.parse(readFileSync(path, 'utf8')));
  } catch (error) {
    throw new ConfigError(`Invalid configuration:\n  PERSISTED_QUERIES_MANIFEST: cannot read ${path}: ${String(error)}`);
  }
  const wrong = manifest.operations.filter((operation) => operation.id !== sha256(operation.body));
  if (wrong.length > 0) {
    const names = wrong.map((operation) => operation.name ?? operation.id).join(', ');
    throw new ConfigError(`Invalid configuration:\n  PERSISTED_QUERIES_MANIFEST: ids are not the SHA-256 of their body: ${names}`);
  }
  return new Map(manifest.operations.map((operation) => [operation.id, operation.body]));
}

export function usePersistedQueryAllowlist(operations: Map<string, string>): GatewayPlugin {
  const notAllowed = (message: string) => ({
    message,
    extensions: { code: ErrorCode.PERSISTED_QUERY_NOT_ALLOWED, http: { status: 400 } },
  });
  const allowlist: Plugin = usePersistedOperations({
    getPersistedOperation: (hash) => operations.get(hash) ?? null,
    allowArbitraryOperations: false,
    customErrors: {
      notFound: { message: 'PersistedQueryNotFound', extensions: { code: ErrorCode.PERSISTED_QUERY_NOT_FOUND, http: { status: 404 } } },
      persistedQueryOnly: notAllowed('Only persisted queries are allowed: send extensions.persistedQuery.sha256Hash alone'),
      keyNotFound: notAllowed('Only persisted queries are allowed: extensions.persistedQuery.sha256Hash is missing'),
    },
  });
  const plugin: Plugin = { ...allowlist, onParams: (payload) => allowlist.onParams!(hashAlone(payload)) };
  return plugin as GatewayPlugin;
}
