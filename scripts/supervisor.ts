// npm start's supervisor: a child that exits is started again after a doubling backoff, so one crashing service never
// takes the others down or spins the CPU (hand-written: a process manager would be one more daemon for a dev command).
import type { ChildProcess } from 'node:child_process';

export interface Backoff {
  /** Wait before the first restart. */
  initialMs: number;
  /** The longest wait, however often it failed. */
  maxMs: number;
  /** A child that ran this long before exiting counts as healthy: its next restart waits initialMs again. */
  resetAfterMs: number;
}

export const DEFAULT_BACKOFF: Backoff = { initialMs: 500, maxMs: 10_000, resetAfterMs: 30_000 };

export interface Supervised {
  /** The child running now (or the one that last exited, while a restart waits). */
  readonly child: ChildProcess;
  /** Restarts so far. */
  readonly restarts: number;
  /** Stops supervising: no more restarts; the running child gets `signal` and is waited for. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export function supervise(
  name: string,
  spawnChild: () => ChildProcess,
  report: (line: string) => void = (line) => console.error(line),
  backoff: Backoff = DEFAULT_BACKOFF,
): Supervised {
  let stopping = false;
  let restarts = 0;
  let delay = 0;
  let pending: NodeJS.Timeout | undefined;
  let child: ChildProcess;

  const running = () => child.exitCode === null && child.signalCode === null;
  const start = () => {
    const startedAt = Date.now();
    child = spawnChild();
    child.once('exit', (code, signal) => {
      if (stopping) return;
      delay = Date.now() - startedAt >= backoff.resetAfterMs || delay === 0 ? backoff.initialMs : Math.min(delay * 2, backoff.maxMs);
      report(`${name} exited (${signal ?? code}); restarting in ${(delay / 1000).toFixed(1)} s while the others keep serving`);
      pending = setTimeout(() => {
        pending = undefined;
        restarts++;
        start();
      }, delay);
    });
  };
  start();

  return {
    get child() {
      return child;
    },
    get restarts() {
      return restarts;
    },
    async stop(signal = 'SIGTERM') {
      stopping = true;
      clearTimeout(pending);
      if (!running()) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill(signal);
      await exited;
    },
  };
}
