// What clients see of errors at the gateway: every error entry leaves with an extensions.code of ours (Yoga's refusals
// mapped, SUBGRAPH_UNAVAILABLE for a subgraph that did not answer) and nothing unexpected leaves unmasked.
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';
import { GraphQLError, type ExecutionResult, type FormattedExecutionResult, type GraphQLFormattedError } from 'graphql';
import { mapAsyncIterator } from '@graphql-tools/utils';
import { ErrorCode, INTERNAL_ERROR_MESSAGE, REQUEST_ID_HEADER, currentRequest, isPublicCode, rootCause } from '@ordergraph/core';
import { TRANSPORT_FAILURES, isTimeout } from '../subgraphs/upstream.js';
import { isSubscriptionRequest } from '../shared/subscription-requests.js';


/** Our code for an HTTP-level refusal, by status (yoga labels them all BAD_REQUEST or REQUEST_ENTITY_TOO_LARGE). */
const CODE_BY_STATUS: Readonly<Record<number, ErrorCode>> = {
  400: ErrorCode.BAD_REQUEST,
  405: ErrorCode.METHOD_NOT_ALLOWED,
  406: ErrorCode.NOT_ACCEPTABLE,
  413: ErrorCode.PAYLOAD_TOO_LARGE,
  415: ErrorCode.UNSUPPORTED_MEDIA_TYPE,
};
const TRANSPORT_CODES = new Set<unknown>(Object.values(CODE_BY_STATUS));

/**
 * Extensions that describe internals: a parse failure's cause, the subgraph's name (the runtime's `serviceName`, the
 * circuit breaker's `subgraph` and `circuit`), the upstream request/response.
 */
const INTERNAL_EXTENSIONS = ['originalError', 'stacktrace', 'exception', 'serviceName', 'subgraph', 'circuit', 'request', 'response'];

/** graphql-js's suggestions ("Did you mean "price"?", "Did you mean the enum value "PENDING"?") reveal the schema. */
const SUGGESTION = / ?Did you mean [^?]*\?/g;

/** A quoted part of a message longer than this is the client's input echoed back (a name, a value): it is cut. */
const LONG_QUOTE = /"([^"]{32})[^"]+"/g;
/** What is left of any message at most. */
const MAX_MESSAGE_LENGTH = 500;

/** A message that quotes at most a short prefix of any input, and in production suggests nothing of the schema. */
const publicMessage = (message: string, production: boolean): string => {
  const cut = (production ? message.replace(SUGGESTION, '') : message).replace(LONG_QUOTE, '"$1…"');
  return cut.length > MAX_MESSAGE_LENGTH ? `${cut.slice(0, MAX_MESSAGE_LENGTH)}…` : cut;
};

export const SUBGRAPH_UNAVAILABLE_MESSAGE = 'A service needed for this request is unavailable';
export const SUBGRAPH_TIMEOUT_MESSAGE = 'A service needed for this request did not answer in time';

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/** The JSON body of a refusal made before GraphQL runs: one error, its code and the request's ID. */
export const errorBody = (code: ErrorCode, message: string): string =>
  JSON.stringify({ errors: [{ message, extensions: { code, ...requestIdExtension() } }] });

/** A JSON error response for refusals made before GraphQL runs. */
export function errorResponse(status: number, code: ErrorCode, message: string, headers: Record<string, string> = {}): Response {
  return new Response(errorBody(code, message), { status, headers: { ...headers, 'content-type': JSON_CONTENT_TYPE } });
}

export const codeForStatus = (status: number): ErrorCode => CODE_BY_STATUS[status] ?? ErrorCode.BAD_REQUEST;

interface HttpExtension {
  status?: number;
  /** Yoga: answer 200 instead of `status` when the client accepts only application/json (GraphQL request errors). */
  spec?: boolean;
}

/** graphql-js's variable coercion errors ("Variable "$id" of required type "ID!" was not provided.") carry no code. */
const isCoercionError = (error: GraphQLError) => error.extensions['code'] === undefined && error.message.startsWith('Variable "$');

function codeOf(error: GraphQLError): unknown {
  const { code, http } = error.extensions as { code?: unknown; http?: HttpExtension };
  if (code === 'REQUEST_ENTITY_TOO_LARGE') return ErrorCode.PAYLOAD_TOO_LARGE;
  if (isCoercionError(error)) return ErrorCode.BAD_USER_INPUT;
  // A library's refusal of a bad request (4xx): yoga calls them all BAD_REQUEST, plugins may bring codes of their own.
  const refusal = http?.status !== undefined && http.status >= 400 && http.status < 500;
  if (refusal && (code === 'BAD_REQUEST' || !isPublicCode(code))) return codeForStatus(http.status!);
  return code;
}

const errorAt = (error: GraphQLError | undefined, message: string, extensions: Record<string, unknown>) =>
  new GraphQLError(message, {
    nodes: error?.nodes ?? null,
    source: error?.source ?? null,
    positions: error?.positions ?? null,
    path: error?.path ?? null,
    extensions,
  });

/**
 * The subgraph that answered `error`, or undefined for an error of the gateway's own. The runtime names the subgraph
 * (`serviceName`) on the errors of its answer, and on an exception thrown while calling it (then the error's cause is no
 * GraphQLError: a failure of the gateway, or of the connection, whose text is never shown).
 */
function answeringSubgraph(error: GraphQLError): string | undefined {
  if (!(rootCause(error) instanceof GraphQLError)) return undefined;
  for (let current: unknown = error; current instanceof GraphQLError; current = current.originalError) {
    const name = current.extensions['serviceName'];
    if (typeof name === 'string') return name;
  }
  return undefined;
}

/**
 * The errors the policy made in place of others: final, so that a second pass (yoga masks, then useErrorPolicy cleans
 * what plugins set) keeps a subgraph's message the first pass let through.
 */
const replacements = new WeakSet<GraphQLError>();

export interface ErrorPolicyOptions {
  production: boolean;
  /**
   * Whether an error a subgraph answers without a code of ours keeps its message (INCLUDE_SUBGRAPH_ERRORS); by default
   * none does.
   */
  includeSubgraphErrors?: (subgraph: string) => boolean;
}

/**
 * The public form of any error. A public error is cleaned in place and keeps its identity (yoga logs every error a mask
 * replaces, and these are the caller's, not ours); what is replaced is a failure of ours, and yoga logs the original.
 * Applying it twice changes nothing.
 */
export function createErrorPolicy({ production, includeSubgraphErrors = () => false }: ErrorPolicyOptions) {
  return function publicError(error: unknown): GraphQLError {
    if (error instanceof GraphQLError && replacements.has(error)) return error;
    if (!(error instanceof GraphQLError)) return errorAt(undefined, INTERNAL_ERROR_MESSAGE, { code: ErrorCode.INTERNAL_SERVER_ERROR, unexpected: true });
    if (TRANSPORT_FAILURES.has(error.extensions['code'])) {
      if (isTimeout(error)) return errorAt(error, SUBGRAPH_TIMEOUT_MESSAGE, { code: ErrorCode.SUBGRAPH_TIMEOUT });
      return errorAt(error, SUBGRAPH_UNAVAILABLE_MESSAGE, { code: ErrorCode.SUBGRAPH_UNAVAILABLE });
    }
    const code = codeOf(error);
    if (!isPublicCode(code) || code === ErrorCode.INTERNAL_SERVER_ERROR || !(rootCause(error) instanceof GraphQLError)) {
      // A subgraph's own words, where it may be shown them: only the message changes, never the code, path or status.
      const subgraph = answeringSubgraph(error);
      const message = subgraph !== undefined && includeSubgraphErrors(subgraph) ? publicMessage(error.message, production) : INTERNAL_ERROR_MESSAGE;
      // `unexpected`: yoga answers 500 when such an error stands alone, without data.
      const replacement = errorAt(error, message, { code: ErrorCode.INTERNAL_SERVER_ERROR, unexpected: true });
      replacements.add(replacement);
      return replacement;
    }
    const extensions = error.extensions as Record<string, unknown> & { http?: HttpExtension };
    // A coercion failure is a GraphQL request error, like a validation failure: 400, but 200 for application/json
    // clients (graphql-tools' executor marks it 400 for everyone; the Rust planner's executor throws it unmarked).
    if (isCoercionError(error)) extensions.http = { ...extensions.http, status: 400, spec: true };
    extensions['code'] = code;
    for (const name of INTERNAL_EXTENSIONS) delete extensions[name];
    // A request that is not well-formed GraphQL-over-HTTP keeps its 4xx whatever the client accepts.
    if (TRANSPORT_CODES.has(code) && extensions.http) delete extensions.http.spec;
    error.message = publicMessage(error.message, production);
    return error;
  };
}

/** The request's ID, for an error's extensions, so a client's report names the log lines to read. */
const requestIdExtension = (): { requestId?: string } => {
  const requestId = currentRequest()?.requestId;
  return requestId ? { requestId } : {};
};

const withRequestId = (error: GraphQLError, requestId = requestIdExtension().requestId): GraphQLError => {
  const extension = requestId ? { requestId } : {};
  if (!extension.requestId) return error;
  const { nodes, source, positions, path, originalError } = error;
  const copy = new GraphQLError(error.message, { nodes, source, positions, path, originalError, extensions: { ...error.extensions, ...extension } });
  if (replacements.has(error)) replacements.add(copy);
  return copy;
};

/**
 * Applies the policy to every error of a response: yoga masks execution errors and thrown request errors through
 * `maskedErrors.maskError` (the same policy), but validation errors and results set by plugins reach the client
 * without a mask, so they are cleaned here.
 */
export function useErrorPolicy(publicError: (error: unknown) => GraphQLError): GatewayPlugin {
  const cleaned = <R extends object>(result: R, requestId?: string): R => {
    if (!('errors' in result) || !Array.isArray(result.errors) || result.errors.length === 0) return result;
    return { ...result, errors: result.errors.map((error: unknown) => withRequestId(publicError(error), requestId)) };
  };
  // The parts of a deferred result (@defer): yoga masks neither their errors nor those of their `incremental` entries.
  // They are written after the request's async context has ended, so the request ID is taken from its header.
  const cleanedPart = (part: IncrementalPart, requestId: string | undefined): IncrementalPart => {
    const next = cleaned(part, requestId);
    return next.incremental ? { ...next, incremental: next.incremental.map((entry) => cleaned(entry, requestId)) } : next;
  };
  return {
    onResultProcess({ request, result, setResult }) {
      // A subscription's events are formatted by their transport (multipart.ts, and yoga's event stream).
      if (typeof result === 'object' && result !== null && Symbol.asyncIterator in result) {
        if (isSubscriptionRequest(request)) return;
        const requestId = request.headers.get(REQUEST_ID_HEADER) ?? undefined;
        setResult(mapAsyncIterator(result as AsyncIterable<IncrementalPart>, (part) => cleanedPart(part, requestId)) as typeof result);
        return;
      }
      // An HTTP batch (BATCH_MAX_OPERATIONS) is an array of results, each cleaned alike.
      setResult(Array.isArray(result) ? result.map((single) => cleaned(single)) : cleaned(result));
    },
  };
}

/** A part of an incremental result (deferSpec=20220824): the first with `data`, the later ones with `incremental`. */
interface IncrementalPart {
  errors?: readonly unknown[];
  incremental?: { errors?: readonly unknown[] }[];
}

/** Extensions yoga uses internally (HTTP status, masking) and drops when it writes a response. */
const YOGA_INTERNAL_EXTENSIONS = ['http', 'unexpected'];

/**
 * What a WebSocket client receives: graphql-ws serialises results itself, so neither useErrorPolicy nor yoga's response
 * writer sees them. Every error goes through the same policy and leaves without yoga's internal extensions, as it
 * would over HTTP.
 */
export function createWebSocketFormatter(publicError: (error: unknown) => GraphQLError) {
  /** `requestId`: the operation's, where no request context is active (a WebSocket connection's messages). */
  const formatError = (error: unknown, requestId = currentRequest()?.requestId): GraphQLFormattedError => {
    const { extensions, ...formatted } = publicError(error).toJSON();
    const kept = Object.fromEntries(Object.entries(extensions ?? {}).filter(([name]) => !YOGA_INTERNAL_EXTENSIONS.includes(name)));
    return { ...formatted, extensions: requestId ? { ...kept, requestId } : kept };
  };
  return {
    formatError,
    formatResult(result: ExecutionResult, requestId?: string): FormattedExecutionResult {
      // Most events have nothing to format: the same object leaves, so a transport may reuse its serialisation.
      if (result.errors === undefined && result.extensions === undefined) return result as FormattedExecutionResult;
      const { errors, extensions, ...rest } = result;
      const { http: _http, ...kept } = extensions ?? {};
      return {
        ...rest,
        ...(errors?.length ? { errors: errors.map((error) => formatError(error, requestId)) } : {}),
        ...(Object.keys(kept).length ? { extensions: kept } : {}),
      };
    },
  };
}
