// The Hive runtime's own log lines go through the process's pino logger: the same JSON lines, request IDs and
// redaction as ours, never its multi-line ANSI console format.
import { Logger as HiveLogger, type LogLevel } from '@graphql-hive/logger';
import { PinoLogWriter } from '@graphql-hive/logger/writers/pino';
import { REQUEST_ID_HEADER, currentRequest, type Logger } from '@ordergraph/core';

const HIVE_LEVELS: Record<string, LogLevel | false> = { silent: false, fatal: 'error', error: 'error', warn: 'warn', info: 'info', debug: 'debug', trace: 'trace' };

type Attributes = Exclude<Parameters<HiveLogger['child']>[0], string>;

/** Children kept per logger at most: the runtime's are few (a subgraph name, a plugin's prefix). */
const MAX_KEPT_CHILDREN = 64;

/**
 * Hive's Logger, whose children are made once: the runtime asks for two for every subgraph call (`{ subgraph }` and
 * a plugin's prefix), and each new Logger reads LOG_LEVEL and DEBUG from the environment. Only children of a prefix
 * or of attributes with plain values are kept, and at most MAX_KEPT_CHILDREN: a child of anything else is made anew.
 */
class ReusingHiveLogger extends HiveLogger {
  readonly #children = new Map<string, HiveLogger>();

  override child(prefix: string): HiveLogger;
  override child(attrs: Attributes, prefix?: string): HiveLogger;
  override child(prefixOrAttrs: string | Attributes, prefix?: string): HiveLogger {
    const key = childKey(prefixOrAttrs, prefix);
    const kept = key === undefined ? undefined : this.#children.get(key);
    if (kept) return kept;
    const child = typeof prefixOrAttrs === 'string' ? super.child(prefixOrAttrs) : super.child(prefixOrAttrs, prefix);
    if (key !== undefined && this.#children.size < MAX_KEPT_CHILDREN) this.#children.set(key, child);
    return child;
  }
}

function childKey(prefixOrAttrs: string | Attributes, prefix: string | undefined): string | undefined {
  if (typeof prefixOrAttrs === 'string') return `prefix ${prefixOrAttrs}`;
  if (Array.isArray(prefixOrAttrs)) return undefined;
  let key = `attrs ${prefix ?? ''}`;
  for (const [name, value] of Object.entries(prefixOrAttrs)) {
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') return undefined;
    key += `|${name}=${typeof value}:${value}`;
  }
  return key;
}

export function hiveLogger(logger: Logger, level: string): HiveLogger | false {
  const hiveLevel = HIVE_LEVELS[level] ?? 'info';
  return hiveLevel === false ? false : new ReusingHiveLogger({ level: hiveLevel, writers: [new PinoLogWriter(logger.child({ component: 'hive' }))] });
}

/**
 * The header that carries the ID its request runs under (gateway.ts and websocket.ts set it; core's logger holds it
 * for the request's whole async life, and adds it to every log line, the runtime's included) to each subgraph call,
 * over HTTP and WebSocket alike; gateway.ts propagates it with the caller's own headers. In place of the runtime's
 * useRequestId (`requestId: false`), which would take the same ID again, give each request a child logger of its
 * own, and skip WebSocket operations. Not a fetch hook of its own: each one costs the runtime a payload object per
 * subgraph call.
 */
export function subgraphRequestId(): Record<string, string> {
  const requestId = currentRequest()?.requestId;
  return requestId ? { [REQUEST_ID_HEADER]: requestId } : {};
}
