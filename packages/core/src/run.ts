import { SHUTDOWN_DEADLINE_MS, type ShutdownSettings } from './config.js';
import type { Logger } from './logger.js';
import type { Telemetry } from './telemetry.js';

export interface Stoppable {
  stop(): Promise<void>;
}

/** A server that drains: readiness first, then the listener, then in-flight work, then resources. */
export interface Drainable extends Stoppable {
  readonly shutdown: ShutdownSettings;
  /** From now on /readyz answers 503 and every response closes its connection; the listener still accepts. */
  beginDrain(): void;
}

const TERMINATION_SIGNALS = ['SIGTERM', 'SIGINT'] as const;

const isDrainable = (service: Stoppable): service is Drainable => 'beginDrain' in service;

/**
 * Libraries that register their own SIGTERM/SIGINT handlers (whatwg-node's server, under Hive Gateway, disposes the
 * subgraph transports at once) would tear resources down under in-flight requests; only runProcess decides the order.
 */
function keepSignalsToOurselves(ours: (signal: string) => void, logger: Logger): void {
  for (const signal of TERMINATION_SIGNALS) {
    for (const listener of process.listeners(signal)) if (listener !== ours) process.removeListener(signal, listener);
  }
  process.on('newListener', (event, listener) => {
    if (!(TERMINATION_SIGNALS as readonly (string | symbol)[]).includes(event) || listener === ours) return;
    logger.debug({ signal: event }, 'a library registered its own termination handler; removed');
    setImmediate(() => process.removeListener(event, listener as (...args: unknown[]) => void));
  });
}

/**
 * The body of every process's index.ts: starts the service and exits non-zero (with a logged reason) when start-up
 * fails. On SIGTERM/SIGINT: /readyz turns 503 at once, the listener keeps accepting for SHUTDOWN_DELAY, then the service
 * stops (in-flight requests finish within SHUTDOWN_DRAIN_TIMEOUT) and the process exits 0; past SHUTDOWN_HARD_TIMEOUT
 * it exits 1 whatever remains. With tracing on, the spans still buffered are exported after the service has stopped.
 */
export function runProcess(logger: Logger, start: () => Promise<Stoppable>, telemetry?: Telemetry): void {
  let service: Stoppable | undefined;
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    const settings = service && isDrainable(service) ? service.shutdown : undefined;
    logger.info({ signal, ...settings }, 'shutting down');
    const forced = setTimeout(() => {
      logger.error('shutdown timed out');
      process.exit(1);
    }, settings?.hardTimeoutMs ?? SHUTDOWN_DEADLINE_MS);
    forced.unref();
    try {
      if (service && isDrainable(service)) {
        service.beginDrain();
        if (settings!.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, settings!.delayMs));
      }
      await service?.stop();
      await telemetry?.shutdown();
      process.exit(0);
    } catch (error) {
      logger.error({ err: error }, 'shutdown failed');
      process.exit(1);
    }
  };
  const onSignal = (signal: string) => void shutdown(signal);
  for (const signal of TERMINATION_SIGNALS) process.on(signal, onSignal);
  process.on('unhandledRejection', (reason) => logger.error({ err: reason }, 'unhandled rejection'));
  start()
    .then((started) => {
      service = started;
      keepSignalsToOurselves(onSignal, logger);
    })
    .catch((error: unknown) => {
      logger.fatal({ err: error }, 'failed to start');
      process.exit(1);
    });
}
