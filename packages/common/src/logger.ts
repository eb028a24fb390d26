import { pino, type Logger } from 'pino';

export type { Logger };

/** Structured JSON logs, one line per event, tagged with the service name. */
export function createLogger(service: string, level: string = process.env['LOG_LEVEL'] ?? 'info'): Logger {
  return pino({ name: service, level, base: { service }, timestamp: pino.stdTimeFunctions.isoTime });
}
