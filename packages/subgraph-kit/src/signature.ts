// Subgraphs trust only the gateway: a request carries an HMAC-SHA256 signature of its operation, made with
// SUBGRAPH_SIGNING_SECRET (core's signOperation), which every subgraph checks before Apollo Server or graphql-ws reads
// the operation.
import { timingSafeEqual } from 'node:crypto';
import { GraphQLError } from 'graphql';
import { ErrorCode, SIGNATURE_EXTENSION, signOperation } from '@ordergraph/core';

export { SIGNATURE_EXTENSION, signOperation };

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Whether `operation` carries a signature made with `secret` over its own query and variables. Anything received may
 * be passed: a body that is not an object (an array, a string, nothing) is not signed.
 */
export function isSignedWith(secret: string, operation: unknown): boolean {
  if (!isRecord(operation)) return false;
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
