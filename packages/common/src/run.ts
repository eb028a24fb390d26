import type { Logger } from './logger.js';

export interface Stoppable {
  stop(): Promise<void>;
}

/** How long a stopping process may take before it exits regardless. */
export const SHUTDOWN_DEADLINE_MS = 15_000;

/**
 * The body of every process's index.ts: starts the service, stops it gracefully on SIGTERM/SIGINT, and exits
 * non-zero (with a logged reason) when start-up fails.
 */
export function runProcess(logger: Logger, start: () => Promise<Stoppable>): void {
  let service: Stoppable | undefined;
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    const forced = setTimeout(() => {
      logger.error('shutdown timed out');
      process.exit(1);
    }, SHUTDOWN_DEADLINE_MS);
    forced.unref();
    try {
      await service?.stop();
      process.exit(0);
    } catch (error) {
      logger.error({ err: error }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('unhandledRejection', (reason) => logger.error({ err: reason }, 'unhandled rejection'));
  start()
    .then((started) => {
      service = started;
    })
    .catch((error: unknown) => {
      logger.fatal({ err: error }, 'failed to start');
      process.exit(1);
    });
}
