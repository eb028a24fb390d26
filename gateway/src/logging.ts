// The Hive runtime's own log lines go through the process's pino logger: the same JSON lines, request IDs and
// redaction as ours, never its multi-line ANSI console format.
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';
import { Logger as HiveLogger, type LogLevel } from '@graphql-hive/logger';
import { PinoLogWriter } from '@graphql-hive/logger/writers/pino';
import { REQUEST_ID_HEADER, currentRequest, type Logger } from '@ordergraph/core';

const HIVE_LEVELS: Record<string, LogLevel | false> = { silent: false, fatal: 'error', error: 'error', warn: 'warn', info: 'info', debug: 'debug', trace: 'trace' };

export function hiveLogger(logger: Logger, level: string): HiveLogger | false {
  const hiveLevel = HIVE_LEVELS[level] ?? 'info';
  return hiveLevel === false ? false : new HiveLogger({ level: hiveLevel, writers: [new PinoLogWriter(logger.child({ component: 'hive' }))] });
}

/**
 * Every subgraph call carries the ID its request runs under (gateway.ts and websocket.ts set it; core's logger holds
 * it for the request's whole async life, and adds it to every log line, the runtime's included). In place of the
 * runtime's useRequestId (`requestId: false`), which would take the same ID again and give each request a child
 * logger of its own, and skips WebSocket operations.
 */
export function useSubgraphRequestIds(): GatewayPlugin {
  return {
    onFetch({ options, setOptions }) {
      const requestId = currentRequest()?.requestId;
      const headers = options.headers as Record<string, string> | undefined;
      if (requestId && !headers?.[REQUEST_ID_HEADER]) setOptions({ ...options, headers: { ...headers, [REQUEST_ID_HEADER]: requestId } });
    },
  };
}
