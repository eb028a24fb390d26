// The Hive runtime's own log lines go through the process's pino logger: the same JSON lines, request IDs and
// redaction as ours, never its multi-line ANSI console format.
import { Logger as HiveLogger, type LogLevel } from '@graphql-hive/logger';
import { PinoLogWriter } from '@graphql-hive/logger/writers/pino';
import type { Logger } from '@ordergraph/core';

const HIVE_LEVELS: Record<string, LogLevel | false> = { silent: false, fatal: 'error', error: 'error', warn: 'warn', info: 'info', debug: 'debug', trace: 'trace' };

export function hiveLogger(logger: Logger, level: string): HiveLogger | false {
  const hiveLevel = HIVE_LEVELS[level] ?? 'info';
  return hiveLevel === false ? false : new HiveLogger({ level: hiveLevel, writers: [new PinoLogWriter(logger.child({ component: 'hive' }))] });
}
