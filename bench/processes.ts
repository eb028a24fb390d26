// The processes a benchmark starts (subgraphs, gateways, load generators), each a Node.js process of its own, and
// their teardown: on the normal way out, on failure and on Ctrl-C, no child outlives the command.
import { execFileSync, fork, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { dirname, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { composeSupergraph, readSupergraphConfig } from '@ordergraph/composition';
import { freePort, startRedis, type TestRedis } from '@ordergraph/testkit';
import { IMAGE_ENV, startFlags } from '../scripts/deployment-files.js';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The secrets every benchmarked process shares: tokens are signed with JWT_SECRET, subgraph calls with the other. */
export const SECRET = 'benchmark-secret-of-at-least-32-characters';
export const SIGNING_SECRET = 'benchmark-subgraph-signing-secret-000000';

const TSX = ['--conditions=source', '--import', 'tsx'];
const children: ChildProcess[] = [];

/**
 * A service's or the gateway's production entry (`services/orders`, `gateway`): the JavaScript `npm run build` writes,
 * run by plain Node as its image runs it. Under tsx a process would also hold the transpiler, its module hooks and
 * every module's source map (50 MB more heap in the gateway) and pay for source-mapped stack traces on every error it creates.
 */
export const builtEntry = (workspace: string): string => `${workspace}/dist/index.js`;
const BUILT_ENTRY = /^(.+)\/dist\/index\.js$/;

/** Runs `npm run build` (turbo: only what changed is built again), so that built entries are those of the sources. */
export function buildEntries(): void {
  process.stdout.write('building the services and the gateway (npm run build)\n');
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
}

/** Lines of a child's own output kept to say why it died: its last log lines (JSON, LOG_LEVEL=warn in the benchmarks). */
const KEPT_OUTPUT_LINES = 20;
/** Children being stopped on purpose: any other exit of a named child ends the benchmark, whose figures need it. */
const stopping = new WeakSet<ChildProcess>();
/** What stops everything a command started (stopOnSignals sets it): run when a named child dies, as on Ctrl-C. */
let cleanupAll: () => Promise<void> = () => stopAll(3_000);

/**
 * Forks an entry of this repository and keeps it on the list `stopAll` ends. JavaScript (a built entry) runs on plain
 * Node; TypeScript through tsx, or with `typeStripping` on Node's own type stripping, for scripts that import only
 * packages (the bench/servers gateways: no transpiler in a process whose CPU and memory are measured). A `name`d child
 * (a service or gateway `start` runs) that exits before `stop` asks it to ends the command, which says which process,
 * how it ended and its last output.
 */
export function forkScript(
  script: string,
  args: string[],
  options: { name?: string; env?: Record<string, string | undefined>; execArgv?: string[]; stdout?: 'ignore' | 'inherit'; typeStripping?: boolean } = {},
): ChildProcess {
  const loader = script.endsWith('.ts') && !options.typeStripping ? TSX : [];
  const child = fork(resolve(ROOT, script), args, {
    cwd: ROOT,
    execArgv: [...loader, ...(options.execArgv ?? [])],
    env: { ...process.env, ...options.env },
    stdio: ['ignore', options.stdout === 'inherit' ? 'inherit' : 'pipe', 'inherit', 'ipc'],
  });
  return keep(child, options.name, child.stdout ? [child.stdout] : []);
}

/**
 * Runs a native program itself, not through a shell or a Node.js wrapper, so that its pid is the process whose CPU
 * and memory /proc tells (bench/process-stats.ts); kept and watched as `forkScript` keeps a script.
 */
export function spawnBinary(name: string, file: string, args: string[], env: Record<string, string>): ChildProcess {
  const child = spawn(file, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  // Both streams are its output: a native program may log to either.
  return keep(child, name, [child.stdout!, child.stderr!]);
}

/**
 * Puts a child on the list `stopAll` ends, keeps the last lines of `outputs`, and ends the command if a named child
 * exits unasked.
 */
function keep(child: ChildProcess, name: string | undefined, outputs: Readable[]): ChildProcess {
  const output: string[] = [];
  for (const input of outputs) {
    createInterface({ input, crlfDelay: Infinity }).on('line', (line) => {
      output.push(line);
      if (output.length > KEPT_OUTPUT_LINES) output.shift();
    });
  }
  children.push(child);
  child.once('exit', () => children.splice(children.indexOf(child), 1));
  // 'close' comes after its output has been read to the end.
  child.once('close', (code, signal) => {
    if (name === undefined || stopping.has(child)) return;
    console.error(`\n${name} (pid ${child.pid}) exited unexpectedly (${signal ?? `code ${code}`}); its last output:\n${output.join('\n') || '(none)'}`);
    void cleanupAll().finally(() => process.exit(1));
  });
  return child;
}

/**
 * The environment the images set (jemalloc as malloc), checked once: without the library the loader would only warn,
 * and a figure measured on glibc's malloc would pass for the image's.
 */
let imageEnvChecked = false;
export function imageEnv(): Record<string, string> {
  if (!imageEnvChecked) {
    const { stderr } = spawnSync(process.execPath, ['-e', ''], { env: { ...process.env, ...IMAGE_ENV }, encoding: 'utf8' });
    if (stderr.includes('cannot be preloaded')) throw new Error(`${IMAGE_ENV.LD_PRELOAD} is not installed (apt-get install libjemalloc2): the images run node on it`);
    imageEnvChecked = true;
  }
  return IMAGE_ENV;
}

/**
 * Starts a service (production mode, the shared secrets) and waits until it answers HTTP at `ready`. A built entry runs
 * as its image runs it, with the Node.js flags of its workspace's start script and the image's environment
 * (`imageEnv`), unless `startFlags` is false.
 */
export async function start(
  name: string,
  script: string,
  args: string[],
  env: Record<string, string>,
  ready: string,
  options: { execArgv?: string[]; typeStripping?: boolean; startFlags?: boolean } = {},
): Promise<ChildProcess> {
  const workspace = BUILT_ENTRY.exec(script)?.[1];
  const asImage = workspace !== undefined && options.startFlags !== false;
  const flags = asImage ? startFlags(workspace) : [];
  const child = forkScript(script, args, {
    name,
    ...(options.typeStripping ? { typeStripping: true } : {}),
    execArgv: [...flags, ...(options.execArgv ?? [])],
    env: { NODE_ENV: 'production', LOG_LEVEL: 'warn', JWT_SECRET: SECRET, SUBGRAPH_SIGNING_SECRET: SIGNING_SECRET, ...(asImage ? imageEnv() : {}), ...env },
  });
  return answering(name, child, ready);
}

/** Starts a native program (`spawnBinary`) and waits until it answers HTTP at `ready`. */
export function startBinary(name: string, file: string, args: string[], env: Record<string, string>, ready: string): Promise<ChildProcess> {
  return answering(name, spawnBinary(name, file, args, env), ready);
}

/** `child` once it answers HTTP at `ready` (a status below 500), within a minute; an error if it exits first. */
function answering(name: string, child: ChildProcess, ready: string): Promise<ChildProcess> {
  const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`${name} exited with ${code}`))));
  const deadline = Date.now() + 60_000;
  const answers = (async () => {
    while (Date.now() < deadline) {
      const ok = await fetch(ready, { method: 'GET', headers: { 'graphql-require-preflight': '1' } }).then((response) => response.status < 500, () => false);
      if (ok) return child;
      await new Promise((done) => setTimeout(done, 200));
    }
    throw new Error(`${name} did not start`);
  })();
  return Promise.race([answers, exited]);
}

/** SIGTERM (a profiled process writes its profile as it exits), then SIGKILL if it has not exited `graceMs` later. */
export function stop(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  stopping.add(child);
  return new Promise((done) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      done();
    });
    child.kill('SIGTERM');
  });
}

/** Stops every child still running, the last started first (gateways before the subgraphs they call). */
export async function stopAll(graceMs?: number): Promise<void> {
  for (const child of [...children].reverse()) await stop(child, graceMs);
}

/**
 * On Ctrl-C or SIGTERM: runs `cleanup` (which should stop everything it started, e.g. with stopAll) and exits 130; a
 * second signal, or a cleanup that takes longer than 15 s, kills what is left at once. A named child's unexpected exit
 * runs it too (forkScript). On any other exit (an uncaught error), children still running are killed.
 */
export function stopOnSignals(cleanup: () => Promise<void>): void {
  cleanupAll = cleanup;
  let interrupted = false;
  const kill = () => {
    for (const child of children) child.kill('SIGKILL');
  };
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupted) {
      kill();
      process.exit(130);
    }
    interrupted = true;
    console.error(`\n${signal}: stopping every process`);
    setTimeout(() => {
      kill();
      process.exit(130);
    }, 15_000).unref();
    void cleanup().finally(() => process.exit(130));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.on('exit', kill);
}

/** The machine a run measures, and how busy it is: printed first by every benchmark. */
export const machineLine = (): string =>
  `machine: ${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`;

/** The three seeded subgraphs, each a process. */
export interface SubgraphProcesses {
  /** Each subgraph's /graphql URL, by name. */
  urls: Record<'users' | 'orders' | 'catalog', string>;
  processes: Record<'users' | 'orders' | 'catalog', ChildProcess>;
}

/** Sets of seeded subgraphs started by this process, to name each one's supergraph file. */
let seededSets = 0;

export interface SeededSubgraphs extends SubgraphProcesses {
  /** The supergraph composed over them, in a temporary file. */
  supergraphPath: string;
}

/**
 * Subgraphs that serve unsigned calls, for a gateway that cannot sign them as ours does (Hive's HMAC in the request's
 * extensions): production refuses to start without SUBGRAPH_SIGNING_SECRET, so they run without NODE_ENV=production
 * and without the secret. On the request path that is all that changes: the signature is neither checked nor made
 * (their calls to each other go unsigned too); production's other settings (Apollo Server's landing page, schema
 * details and stack traces in errors, introspection) do not touch an answer without errors.
 */
export const UNSIGNED_SUBGRAPH_ENV = { NODE_ENV: 'development', SUBGRAPH_SIGNING_SECRET: '' };

/**
 * The three subgraphs on their seed (embedded stores), each a process: production mode and signed calls unless `env`
 * says otherwise (UNSIGNED_SUBGRAPH_ENV). `entry` says what runs: the built JavaScript by default (another checkout's,
 * given its path). `execArgv` adds Node.js flags to a subgraph's (--cpu-prof, say).
 */
export async function startSubgraphProcesses(
  redisUrl: string,
  options: { env?: Record<string, string>; entry?: (workspace: string) => string; execArgv?: (name: keyof SubgraphProcesses['urls']) => string[] } = {},
): Promise<SubgraphProcesses> {
  const { env = {}, entry = builtEntry, execArgv = () => [] } = options;
  const ports = { users: await freePort(), orders: await freePort(), catalog: await freePort() };
  const urls = { users: `http://127.0.0.1:${ports.users}/graphql`, orders: `http://127.0.0.1:${ports.orders}/graphql`, catalog: `http://127.0.0.1:${ports.catalog}/graphql` };
  const health = (url: string) => url.replace('/graphql', '/healthz');
  const processes = {
    catalog: await start('catalog', entry('services/catalog'), [], { ...env, PORT: String(ports.catalog), SEED: 'true' }, health(urls.catalog), { execArgv: execArgv('catalog') }),
    orders: await start('orders', entry('services/orders'), [], { ...env, PORT: String(ports.orders), SEED: 'true', CATALOG_URL: urls.catalog, REDIS_URL: redisUrl }, health(urls.orders), { execArgv: execArgv('orders') }),
    users: await start('users', entry('services/users'), [], { ...env, PORT: String(ports.users), SEED: 'true', ORDERS_URL: urls.orders, CATALOG_URL: urls.catalog }, health(urls.users), { execArgv: execArgv('users') }),
  };
  return { urls, processes };
}

/**
 * The three subgraphs on their seed (production mode, embedded stores), each a process, and the supergraph over them;
 * `options` as startSubgraphProcesses takes them.
 */
export async function startSeededSubgraphs(redisUrl: string, options: Parameters<typeof startSubgraphProcesses>[1] = {}): Promise<SeededSubgraphs> {
  process.stdout.write('starting subgraphs (production mode, seeded embedded stores)\n');
  const { urls, processes } = await startSubgraphProcesses(redisUrl, options);
  const supergraphPath = resolve(tmpdir(), `ordergraph-bench-supergraph.${process.pid}.${seededSets++}.graphql`);
  writeFileSync(supergraphPath, composeSupergraph(readSupergraphConfig(), urls));
  return { urls, processes, supergraphPath };
}

/** What every benchmark does first: builds the entries it runs, starts a private Redis, and cleans both up on Ctrl-C. */
export async function prepareRun(): Promise<TestRedis> {
  buildEntries();
  const redis = await startRedis();
  stopOnSignals(async () => {
    await stopAll(3_000);
    await redis.close();
  });
  return redis;
}
