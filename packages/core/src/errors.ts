// The one place error codes and their GraphQLErrors are made. Every error a client sees carries extensions.code.
import { GraphQLError } from 'graphql';

export const ErrorCode = {
  GRAPHQL_PARSE_FAILED: 'GRAPHQL_PARSE_FAILED',
  GRAPHQL_VALIDATION_FAILED: 'GRAPHQL_VALIDATION_FAILED',
  BAD_USER_INPUT: 'BAD_USER_INPUT',
  UNAUTHENTICATED: 'UNAUTHENTICATED',
  FORBIDDEN: 'FORBIDDEN',
  NOT_FOUND: 'NOT_FOUND',
  INVALID_TRANSITION: 'INVALID_TRANSITION',
  CONFLICT: 'CONFLICT',
  EMAIL_TAKEN: 'EMAIL_TAKEN',
  DEPTH_LIMIT_EXCEEDED: 'DEPTH_LIMIT_EXCEEDED',
  COMPLEXITY_LIMIT_EXCEEDED: 'COMPLEXITY_LIMIT_EXCEEDED',
  // Bounds on the input of a request at the gateway, each checked before the document is parsed further or executed.
  TOKEN_LIMIT_EXCEEDED: 'TOKEN_LIMIT_EXCEEDED',
  NESTING_LIMIT_EXCEEDED: 'NESTING_LIMIT_EXCEEDED',
  FIELD_LIMIT_EXCEEDED: 'FIELD_LIMIT_EXCEEDED',
  ALIAS_LIMIT_EXCEEDED: 'ALIAS_LIMIT_EXCEEDED',
  DIRECTIVE_LIMIT_EXCEEDED: 'DIRECTIVE_LIMIT_EXCEEDED',
  DUPLICATE_FIELD_LIMIT_EXCEEDED: 'DUPLICATE_FIELD_LIMIT_EXCEEDED',
  VARIABLES_LIMIT_EXCEEDED: 'VARIABLES_LIMIT_EXCEEDED',
  STRING_TOO_LONG: 'STRING_TOO_LONG',
  OPERATION_NAME_TOO_LONG: 'OPERATION_NAME_TOO_LONG',
  RATE_LIMITED: 'RATE_LIMITED',
  // A persisted query sent with a hash that is not its SHA-256 (the code @graphql-yoga/plugin-apq gives it).
  PERSISTED_QUERY_MISMATCH: 'PERSISTED_QUERY_MISMATCH',
  PERSISTED_QUERY_NOT_FOUND: 'PERSISTED_QUERY_NOT_FOUND',
  PERSISTED_QUERY_NOT_ALLOWED: 'PERSISTED_QUERY_NOT_ALLOWED',
  PAYLOAD_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  // HTTP-level refusals of a request that is not a well-formed GraphQL-over-HTTP request (gateway).
  BAD_REQUEST: 'BAD_REQUEST',
  METHOD_NOT_ALLOWED: 'METHOD_NOT_ALLOWED',
  NOT_ACCEPTABLE: 'NOT_ACCEPTABLE',
  UNSUPPORTED_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  SUBGRAPH_UNAVAILABLE: 'SUBGRAPH_UNAVAILABLE',
  // A subgraph did not answer within its timeout (SUBGRAPH_TIMEOUT_MS), or the request outlived REQUEST_DEADLINE_MS.
  SUBGRAPH_TIMEOUT: 'SUBGRAPH_TIMEOUT',
  GATEWAY_TIMEOUT: 'GATEWAY_TIMEOUT',
  // A subscriber that stopped reading its events was disconnected.
  SUBSCRIBER_TOO_SLOW: 'SUBSCRIBER_TOO_SLOW',
  // The gateway switched to a new supergraph: the subscription ended, and the client subscribes again (Apollo Router's code).
  SUBSCRIPTION_SCHEMA_RELOAD: 'SUBSCRIPTION_SCHEMA_RELOAD',
  INTERNAL_SERVER_ERROR: 'INTERNAL_SERVER_ERROR',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** Codes a client may see as they are; anything else is masked as INTERNAL_SERVER_ERROR. */
const PUBLIC_CODES = new Set<string>([
  ...Object.values(ErrorCode),
  // Apollo Server's own request-level codes.
  'PERSISTED_QUERY_NOT_SUPPORTED',
  'OPERATION_RESOLUTION_FAILURE',
]);

/** Whether an error code may reach a client as it is (INTERNAL_SERVER_ERROR only with its generic message). */
export const isPublicCode = (code: unknown): code is string => typeof code === 'string' && PUBLIC_CODES.has(code);

export const INTERNAL_ERROR_MESSAGE = 'Internal server error';

export function notFound(resource: string, id: string): GraphQLError {
  return new GraphQLError(`${resource} with id ${id} not found`, {
    extensions: { code: ErrorCode.NOT_FOUND, resource, id },
  });
}

export function forbidden(message = 'Not authorized'): GraphQLError {
  return new GraphQLError(message, { extensions: { code: ErrorCode.FORBIDDEN } });
}

export function unauthenticated(message = 'Authentication required'): GraphQLError {
  return new GraphQLError(message, { extensions: { code: ErrorCode.UNAUTHENTICATED } });
}

export function badUserInput(message: string, details: Record<string, unknown> = {}): GraphQLError {
  return new GraphQLError(message, { extensions: { code: ErrorCode.BAD_USER_INPUT, ...details } });
}

export function invalidTransition(from: string, to: string): GraphQLError {
  return new GraphQLError(`Cannot move an order from ${from} to ${to}`, {
    extensions: { code: ErrorCode.INVALID_TRANSITION, from, to },
  });
}

export function conflict(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: ErrorCode.CONFLICT } });
}

export function emailTaken(email: string): GraphQLError {
  return new GraphQLError(`A user with email ${email} already exists`, {
    extensions: { code: ErrorCode.EMAIL_TAKEN, email },
  });
}

/** graphql-js wraps what a resolver throws in located GraphQLErrors; the innermost error tells who raised it. */
export function rootCause(error: unknown): unknown {
  let current = error;
  while (current instanceof GraphQLError && current.originalError) current = current.originalError;
  return current;
}
