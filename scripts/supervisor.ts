// npm start's supervisor: a child that exits is started again after a doubling backoff, so one crashing service never
// takes the others down or spins the CPU (hand-written: a process manager would be one more daemon for a dev command).
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

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

/** The preload that makes a child exit when its supervisor goes away (supervised-child.ts). */
const ORPHAN_GUARD = new URL('./supervised-child.ts', import.meta.url).href;

export interface NodeChildOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Each line the child writes, as it comes. */
  output: (line: string, stream: 'stdout' | 'stderr') => void;
}

/**
 * A TypeScript entry in a Node.js child of its own, tied to this process by an IPC channel (the orphan guard watches
 * it), its output read line by line so the supervisor decides how it is shown.
 */
export function spawnNodeChild(entry: string, { cwd, env, output }: NodeChildOptions): ChildProcess {
  const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', '--import', ORPHAN_GUARD, entry], {
    cwd,
    env,
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  for (const stream of ['stdout', 'stderr'] as const) createInterface({ input: child[stream]! }).on('line', (line) => output(line, stream));
  return child;
}

export const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * Calls `stop` when this process is asked to end: a signal sent to it alone (an IDE's stop button, `kill`, a process
 * manager), Ctrl-C, a closed terminal, or its parent dying (npm SIGKILLed), seen as the parent pid changing, since no
 * signal says so. A second signal while stopping calls `hurry`.
 */
export function stopWhenAsked(stop: (reason: string) => void, hurry: () => void, pollMs = 500): void {
  const parent = process.ppid;
  let asked = false;
  const ask = (reason: string) => {
    if (asked) return hurry();
    asked = true;
    clearInterval(orphaned);
    stop(reason);
  };
  for (const signal of STOP_SIGNALS) process.on(signal, () => ask(signal));
  const orphaned = setInterval(() => {
    if (process.ppid !== parent) ask('its parent process exited');
  }, pollMs);
  orphaned.unref();
}

/** What npm start says while it drains on Ctrl-C or a signal, and once everything has exited. */
export const stoppingLine = (reason: string) => `Stopping (${reason}): every process drains its requests, then exits…`;
export const STOPPED_LINE = 'Stopped: every process has exited.';

/**
 * Stops every supervised process when this one is asked to (stopWhenAsked), saying so as it drains and when done, then
 * exits 0; a second request kills them at once. Returns the same stop, for a start that fails.
 */
export function stopAllWhenAsked(services: readonly Supervised[], log: (line: string) => void = (line) => console.error(line)) {
  const stop = async (code: number, reason: string): Promise<never> => {
    log(stoppingLine(reason));
    // Every process drains (SIGTERM) at once; a terminal's Ctrl-C has sent them SIGINT already, which drains the same.
    await Promise.all(services.map((service) => service.stop('SIGTERM')));
    log(STOPPED_LINE);
    process.exit(code);
  };
  stopWhenAsked(
    (reason) => void stop(0, reason),
    () => {
      log('Asked again: killing every process now.');
      for (const service of services) service.child.kill('SIGKILL');
    },
  );
  return stop;
}
