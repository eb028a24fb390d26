// Logs: one JSON object per line from every process (pino), each line about a request carrying its request ID, never
// a credential.
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';

export type { Logger };

export const REQUEST_ID_HEADER = 'x-request-id';

/** What is known about the request being served, wherever in its handling a line is logged. */
export interface RequestContext {
  requestId: string;
}

const requestContext = new AsyncLocalStorage<RequestContext>();

/** The request being served by the current async context, if any. */
export const currentRequest = (): RequestContext | undefined => requestContext.getStore();

/** Runs `fn` as the handling of the request `requestId`: its log lines and outgoing calls carry the ID. */
export const withRequest = <T>(requestId: string, fn: () => T): T => requestContext.run({ requestId }, fn);

/** A client's own ID is kept when it is a plausible one (a UUID, a ULID, a proxy's hex ID...); otherwise a new UUID. */
const WELL_FORMED_REQUEST_ID = /^[A-Za-z0-9._:-]{8,128}$/;
export const requestIdFrom = (header: string | null | undefined): string =>
  header && WELL_FORMED_REQUEST_ID.test(header) ? header : randomUUID();

/** More fields for every line, read when it is logged: tracing adds the active trace and span IDs. */
let extraLineContext: (() => Record<string, string> | undefined) | undefined;
export const addLineContext = (source: () => Record<string, string> | undefined): void => {
  extraLineContext = source;
};

/** The request's ID, on every line logged while serving it (and, with tracing on, its trace and span IDs). */
function lineContext(): Record<string, string> {
  const request = requestContext.getStore();
  const fields: Record<string, string> = request ? { requestId: request.requestId } : {};
  return extraLineContext ? { ...fields, ...extraLineContext() } : fields;
}

// Credentials never reach a log line: fields by name, and bearer tokens or JWTs inside any string (a library's debug
// line may quote a header or a curl command).
const SECRET_KEY = /authorization|cookie|password|secret|token|apikey|api-key/i;
const SECRET_TEXT = /(bearer\s+)[^\s'",]+|eyJ[\w-]+\.[\w-]+\.[\w-]*/gi;
const REDACTED = '[redacted]';

/** `value` with every credential replaced; hand-written because pino's redact needs exact paths, and lines vary. */
function redact(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return value.replace(SECRET_TEXT, (_match, bearer?: string) => (bearer ? `${bearer}${REDACTED}` : REDACTED));
  if (value === null || typeof value !== 'object' || depth > 6 || value instanceof Error) return value;
  if (Array.isArray(value)) return value.map((item) => redact(item, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, SECRET_KEY.test(key) ? REDACTED : redact(item, depth + 1)]));
}

/**
 * Structured JSON logs, one line per event, tagged with the service name; to stdout unless `destination` is given.
 * An empty LOG_LEVEL (`LOG_LEVEL=` in a .env) is unset, as loadConfig treats every empty setting.
 */
export function createLogger(service: string, level: string = process.env['LOG_LEVEL'] || 'info', destination?: DestinationStream): Logger {
  const options: LoggerOptions = {
    name: service,
    level,
    base: { service },
    timestamp: pino.stdTimeFunctions.isoTime,
    mixin: lineContext,
    formatters: { log: (object) => redact(object) as Record<string, unknown> },
    hooks: {
      logMethod(args, method) {
        method.apply(this, args.map((arg) => (typeof arg === 'string' ? redact(arg) : arg)) as Parameters<typeof method>);
      },
    },
  };
  return destination ? pino(options, destination) : pino(options);
}

/** Headers a call to another service carries so its log lines about this request name the same ID. */
export function forwardedRequestHeaders(): Record<string, string> {
  const requestId = requestContext.getStore()?.requestId;
  return requestId ? { [REQUEST_ID_HEADER]: requestId } : {};
}
