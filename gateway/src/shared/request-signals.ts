// The signal of each HTTP request that aborts when its deadline passes or its client leaves (http.ts sets it), kept
// apart so that upstream.ts, metrics.ts and query-planner.ts can read it without importing the HTTP layer.
import type { IncomingMessage } from 'node:http';

const signals = new WeakMap<IncomingMessage, AbortSignal>();

export const setRequestSignal = (request: IncomingMessage, signal: AbortSignal): void => void signals.set(request, signal);

/**
 * Aborts when the request's deadline passes or its client leaves before the answer; undefined for a request that has
 * none (a WebSocket's upgrade). upstream.ts cancels the subgraph calls of a request through it.
 */
export const requestSignalOf = (request: IncomingMessage | undefined): AbortSignal | undefined => request && signals.get(request);

/** A ClientClosedError's message: tracing knows the spans it cut by it (opentelemetry.ts). */
export const CLIENT_CLOSED_MESSAGE = 'The client closed the connection';

/** Why a request's signal aborts when its client leaves before the answer. */
export class ClientClosedError extends Error {
  override name = 'ClientClosedError';
  constructor() {
    super(CLIENT_CLOSED_MESSAGE);
  }
}

/** The signal of the HTTP request an operation's context belongs to (its `req`), as requestSignalOf. */
export const contextSignalOf = (context: unknown): AbortSignal | undefined => requestSignalOf((context as { req?: IncomingMessage } | null | undefined)?.req);

/**
 * Whether the client of an HTTP request (a context's `req`) left before its answer: whatever failed after that failed
 * because the gateway cancelled it, and nobody reads the result.
 */
export const clientLeft = (context: unknown): boolean => contextSignalOf(context)?.reason instanceof ClientClosedError;
