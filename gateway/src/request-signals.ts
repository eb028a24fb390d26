// The signal of each HTTP request that aborts when its deadline passes or its client leaves (http.ts sets it), kept
// apart so that upstream.ts can read it without importing the HTTP layer.
import type { IncomingMessage } from 'node:http';

const signals = new WeakMap<IncomingMessage, AbortSignal>();

export const setRequestSignal = (request: IncomingMessage, signal: AbortSignal): void => void signals.set(request, signal);

/**
 * Aborts when the request's deadline passes or its client leaves before the answer; undefined for a request that has
 * none (a WebSocket's upgrade). upstream.ts cancels the subgraph calls of a request through it.
 */
export const requestSignalOf = (request: IncomingMessage | undefined): AbortSignal | undefined => request && signals.get(request);
