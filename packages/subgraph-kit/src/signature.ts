// Subgraphs trust only the gateway: a request carries an HMAC-SHA256 signature of its operation, made with
// SUBGRAPH_SIGNING_SECRET, which every subgraph checks before Apollo Server or graphql-ws reads the operation.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { defaultParamsSerializer } from '@graphql-mesh/hmac-upstream-signature';
import { GraphQLError } from 'graphql';
import { ErrorCode } from '@ordergraph/core';

// The gateway signs with Hive's own upstream signature (its `hmacSignature` option), subgraph-to-subgraph calls sign
// the same way (peer.ts), and subgraph.ts checks it.
/** Where the signature travels: the extension Hive's useHmacUpstreamSignature writes. */
export const SIGNATURE_EXTENSION = 'hmac-signature';

/** An operation as a subgraph receives it (an HTTP body or a graphql-ws subscribe payload); nothing in it is trusted. */
export interface ReceivedOperation {
  query?: unknown;
  variables?: unknown;
  extensions?: unknown;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The signature of an operation. The signed text is Hive's own serialization (the one its signing plugin and its
 * validation plugin for Yoga use), so what the gateway signs and what this checks cannot drift apart.
 */
export function signOperation(secret: string, operation: { query: string; variables?: Record<string, unknown> | undefined }): string {
  // A stable stringify of an object is always a string; its type allows undefined for values JSON has no text for.
  const signed = defaultParamsSerializer({ query: operation.query, variables: operation.variables }) ?? '';
  return createHmac('sha256', secret).update(signed).digest('base64');
}

/** Whether `operation` carries a signature made with `secret` over its own query and variables. */
export function isSignedWith(secret: string, operation: ReceivedOperation): boolean {
  const signature = isRecord(operation.extensions) ? operation.extensions[SIGNATURE_EXTENSION] : undefined;
  if (typeof signature !== 'string' || typeof operation.query !== 'string') return false;
  if (operation.variables !== undefined && operation.variables !== null && !isRecord(operation.variables)) return false;
  const expected = Buffer.from(signOperation(secret, { query: operation.query, variables: operation.variables ?? undefined }));
  const given = Buffer.from(signature);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** The refusal of a request the gateway did not sign (a direct call, or a gateway with another secret); HTTP 403. */
export const unsignedRequest = (): GraphQLError =>
  new GraphQLError('Only the gateway may call this service', { extensions: { code: ErrorCode.FORBIDDEN } });
