// The supergraph as separate processes, for the fault-injection suites: each subgraph and the gateway runs as its own
// Node process (as `npm start` and production run them), so a test can signal, stop, kill and restart any one of them.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT, composeSupergraph, readSupergraphConfig, writeSupergraph } from '@ordergraph/composition';

export type ProcessName = 'users' | 'orders' | 'catalog' | 'gateway';

const ENTRIES: Record<ProcessName, string> = {
  catalog: 'services/catalog/src/index.ts',
  orders: 'services/orders/src/index.ts',
  users: 'services/users/src/index.ts',
  gateway: 'gateway/src/index.ts',
};

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ServiceProcess {
  readonly name: ProcessName;
  /** The /graphql URL; the port stays the same across restarts. */
  readonly url: string;
  readonly child: ChildProcess;
  /** Resolves when the current child exits. */
  readonly exited: Promise<Exit>;
  /** Every JSON log line the process has written so far (all its lives). */
  readonly logs: Record<string, unknown>[];
  signal(signal: NodeJS.Signals): void;
  /** Starts it again on the same port (after it exited), with extra environment if given. */
  restart(env?: Record<string, string>): Promise<void>;
}

export interface ProcessSupergraph {
  processes: Record<ProcessName, ServiceProcess>;
  url: string;
  /** Where the gateway reads its supergraph (polled), so a test can replace it. */
  supergraphPath: string;
  stop(): Promise<void>;
}

// Generous: a cold start compiles TypeScript on the fly, and CI machines are shared.
const START_TIMEOUT_MS = 120_000;

async function launch(name: ProcessName, env: Record<string, string>, logs: Record<string, unknown>[]) {
  const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', ENTRIES[name]], {
    cwd: REPO_ROOT,
    env: { ...process.env, NODE_ENV: 'development', LOG_LEVEL: 'info', HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<Exit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => { stderr = (stderr + chunk.toString()).slice(-4000); if (process.env['DEBUG_FAULTS']) process.stderr.write(`[${name}] ${chunk}`); });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start within ${START_TIMEOUT_MS} ms: ${stderr}`)), START_TIMEOUT_MS);
    let pending = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      pending += chunk.toString();
      const lines = pending.split('\n');
      pending = lines.pop()!;
      for (const line of lines) {
        try {
          const entry = JSON.parse(line) as Record<string, unknown>;
          logs.push(entry);
          if (typeof entry['url'] === 'string' && String(entry['msg']).includes('listening')) {
            clearTimeout(timer);
            resolve(entry['url']);
          }
        } catch {
          // not a log line
        }
      }
    });
    void exited.then((exit) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited while starting (${exit.signal ?? exit.code}): ${stderr}`));
    });
  });
  return { child, exited, url };
}

async function startProcess(name: ProcessName, env: Record<string, string>): Promise<ServiceProcess> {
  const logs: Record<string, unknown>[] = [];
  let current = await launch(name, { PORT: '0', ...env }, logs);
  const port = new URL(current.url).port;
  return {
    name,
    url: current.url,
    logs,
    get child() {
      return current.child;
    },
    get exited() {
      return current.exited;
    },
    signal(signal) {
      current.child.kill(signal);
    },
    async restart(extra = {}) {
      if (current.child.exitCode === null && current.child.signalCode === null) throw new Error(`${name} is still running`);
      current = await launch(name, { ...env, PORT: port, ...extra }, logs);
    },
  };
}

export interface ProcessSupergraphOptions {
  /** Environment of every process. */
  env?: Record<string, string>;
  /** Extra environment per process. */
  envOf?: Partial<Record<ProcessName, Record<string, string>>>;
}

export async function startProcessSupergraph(options: ProcessSupergraphOptions = {}): Promise<ProcessSupergraph> {
  const env = (name: ProcessName) => ({ SEED: 'true', ...options.env, ...options.envOf?.[name] });
  const started: ServiceProcess[] = [];
  const stop = async () => {
    await Promise.all(
      started.map(async (service) => {
        if (service.child.exitCode !== null || service.child.signalCode !== null) return;
        service.signal('SIGCONT');
        service.signal('SIGKILL');
        await service.exited;
      }),
    );
  };
  try {
    const catalog = await startProcess('catalog', env('catalog'));
    started.push(catalog);
    // Each learns the URLs of the ones before it (users asks orders and the catalog for search hits).
    const orders = await startProcess('orders', { ...env('orders'), CATALOG_URL: catalog.url });
    started.push(orders);
    const users = await startProcess('users', { ...env('users'), ORDERS_URL: orders.url, CATALOG_URL: catalog.url });
    started.push(users);
    const supergraphPath = join(mkdtempSync(join(tmpdir(), 'ordergraph-faults-')), 'supergraph.graphql');
    writeSupergraph(supergraphPath, composeSupergraph(readSupergraphConfig(), { users: users.url, orders: orders.url, catalog: catalog.url }));
    const gateway = await startProcess('gateway', { ...env('gateway'), SUPERGRAPH_PATH: supergraphPath });
    started.push(gateway);
    return { processes: { catalog, orders, users, gateway }, url: gateway.url, supergraphPath, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
