// npm start's plan (every port from the environment, each process pointed at the others' ports), what it prints, and
// its supervision: real child processes that exit are restarted with backoff, and Ctrl-C drains everything.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseEnv } from 'node:util';
import { networkInterfaces } from 'node:os';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, subgraphHost, toGlobalId } from '@ordergraph/core';
import { REPO_ROOT } from '@ordergraph/composition';
import { loadCatalogConfig } from '@ordergraph/catalog/config';
import { loadGatewayConfig } from '@ordergraph/gateway/config';
import { loadOrdersConfig } from '@ordergraph/orders/config';
import { loadUsersConfig } from '@ordergraph/users/config';
import { freePort, graphql, token, waitFor } from '@ordergraph/testkit';
import { startPlan } from '../scripts/start-plan.js';
import { colourWanted, paint, prettyLogsWanted, processProgress, renderLogLine, setting, storeMode, summaryBox, tokenLines } from '../scripts/start-report.js';
import { STOPPED_LINE, stoppingLine, supervise } from '../scripts/supervisor.js';

const portsOf = (plan: ReturnType<typeof startPlan>) => Object.fromEntries([...plan.subgraphs, plan.gateway].map(({ name, port }) => [name, port]));

describe('npm start', () => {
  it("listens on each image's default port when nothing is set", () => {
    const plan = startPlan({});
    expect(portsOf(plan)).toEqual({
      catalog: loadCatalogConfig({}).PORT,
      orders: loadOrdersConfig({}).PORT,
      users: loadUsersConfig({}).PORT,
      gateway: loadGatewayConfig({}).PORT,
    });
  });

  it('moves every process with PORT and <NAME>_PORT, and tells the others where they went', () => {
    const plan = startPlan({ PORT: '5000', USERS_PORT: '5001', ORDERS_PORT: '5002', CATALOG_PORT: '5003' });
    expect(portsOf(plan)).toEqual({ catalog: 5003, orders: 5002, users: 5001, gateway: 5000 });
    const env = Object.fromEntries([...plan.subgraphs, plan.gateway].map(({ name, env }) => [name, env]));
    // Each process reads these through its own validated configuration.
    expect(loadOrdersConfig(env['orders']!).CATALOG_URL).toBe('http://127.0.0.1:5003/graphql');
    expect(loadUsersConfig(env['users']!)).toMatchObject({ ORDERS_URL: 'http://127.0.0.1:5002/graphql', CATALOG_URL: 'http://127.0.0.1:5003/graphql' });
    expect(loadGatewayConfig(env['gateway']!)).toMatchObject({
      SUBGRAPH_USERS_URL: 'http://127.0.0.1:5001/graphql',
      SUBGRAPH_ORDERS_URL: 'http://127.0.0.1:5002/graphql',
      SUBGRAPH_CATALOG_URL: 'http://127.0.0.1:5003/graphql',
    });
  });

  it('binds subgraphs to 127.0.0.1 in development, to every address in production, or where HOST says', () => {
    expect(subgraphHost(loadUsersConfig({}))).toBe('127.0.0.1');
    expect(subgraphHost(loadOrdersConfig({ NODE_ENV: 'production' }))).toBe('0.0.0.0');
    expect(subgraphHost(loadCatalogConfig({ HOST: '10.0.0.7' }))).toBe('10.0.0.7');
  });

  it('refuses a port that is not one, naming the variable', () => {
    expect(() => startPlan({ ORDERS_PORT: 'http' })).toThrow(ConfigError);
    expect(() => startPlan({ ORDERS_PORT: '70000' })).toThrow(/ORDERS_PORT/);
  });
});

describe('what npm start prints', () => {
  it('names the store mode and what a restart does to the data', () => {
    expect(storeMode({})).toMatchObject({ label: 'embedded, in memory', restart: expect.stringContaining('a restart loses every write') });
    expect(storeMode({ DATA_DIR: '/var/ordergraph' })).toMatchObject({ label: 'embedded, kept in /var/ordergraph', restart: expect.stringContaining('keeps every write') });
    expect(storeMode({ DATA_DIR: '/var/ordergraph', MONGO_URL: 'mongodb://db' }).label).toBe('MongoDB (MONGO_URL)');
  });

  it('prints a line per process as it starts and as it becomes ready or fails', () => {
    const lines: string[] = [];
    const progress = processProgress('orders', 4002, (line) => lines.push(line));
    progress.ready();
    processProgress('users', 4001, (line) => lines.push(line)).failed('exited (1)');
    expect(lines).toEqual([
      expect.stringMatching(/^ {2}… {2}orders {3}starting on :4002$/),
      expect.stringMatching(/^ {2}✓ {2}orders {3}ready on :4002 in \d+\.\d s$/),
      expect.stringMatching(/^ {2}… {2}users {4}starting on :4001$/),
      expect.stringMatching(/^ {2}✗ {2}users {4}failed after \d+\.\d s: exited \(1\)$/),
    ]);
  });

  it('ends with a box under 100 columns holding the URLs and the modes, and the whole tokens below it', () => {
    const token = `eyJ${'a'.repeat(300)}`;
    const box = summaryBox({
      url: 'http://localhost:4000/graphql',
      graphiql: true,
      store: storeMode({ DATA_DIR: `/var/lib/${'deep/'.repeat(30)}ordergraph` }),
      redis: 'none: rate limits, persisted queries and events stay inside each process (development only)',
    });
    const lines = box.split('\n');
    expect(new Set(lines.map((line) => line.length)).size).toBe(1);
    expect(lines[0]!.length).toBeLessThan(100);
    expect(lines[0]).toMatch(/^╭─+╮$/);
    expect(lines.at(-1)).toMatch(/^╰─+╯$/);
    const text = lines.map((line) => line.slice(2, -2).trim()).join(' ').replace(/\s+/g, ' ');
    for (const part of ['GraphQL http://localhost:4000/graphql', 'GraphiQL http://localhost:4000/graphql', 'a restart keeps every write', 'stay inside each process (development only)', 'Ctrl-C stops everything.']) {
      expect(text).toContain(part);
    }
    // Wrapped and second lines stay in the column after the labels.
    expect(lines.filter((line) => /^│ {11}\S/.test(line)).map((line) => line.slice(12, 27))).toEqual(['/var/lib/deep/d', 'p/deep/deep/dee', 'graph          ', 'a restart keeps', '(development on']);
    expect(lines.join('')).not.toContain('eyJ');
    expect(summaryBox({ url: 'u', graphiql: false, store: storeMode({}), redis: 'r' })).not.toContain('GraphiQL');
    expect(tokenLines([{ label: 'USER token', token }, { label: 'ADMIN token', token: 'eyJb' }]).split('\n')).toEqual(['USER token:', token, 'ADMIN token:', 'eyJb']);
  });

  it("shows a child's JSON log line as one readable line, and anything else as it came", () => {
    const warning = JSON.stringify({ level: 40, time: '2026-11-27T01:55:04.389Z', service: 'orders', name: 'orders', msg: 'No Redis is configured', event: 'no_redis' });
    expect(renderLogLine('orders', warning)).toBe('  warn  orders   No Redis is configured event=no_redis');
    const failure = JSON.stringify({ level: 50, service: 'users', msg: 'shutdown failed', err: { type: 'Error', message: 'boom', stack: 'Error: boom\n    at x' }, port: 4001 });
    expect(renderLogLine('users', failure)).toBe('  error users    shutdown failed err=boom port=4001');
    expect(renderLogLine('users', failure, paint(true))).toBe('  \u001b[31merror\u001b[39m users    shutdown failed err=boom port=4001');
    for (const line of ['(node:123) Warning: something', '{"not":"a log line"}', '[1,2]', '']) expect(renderLogLine('users', line)).toBe(line);
  });

  it('colours only a terminal outside CI, unless NO_COLOR or FORCE_COLOR says otherwise', () => {
    const tty = { isTTY: true };
    const pipe = { isTTY: false };
    expect(colourWanted(tty, {})).toBe(true);
    expect(colourWanted(pipe, {})).toBe(false);
    expect(colourWanted(tty, { CI: 'true' })).toBe(false);
    expect(colourWanted(tty, { CI: 'false' })).toBe(true);
    expect(colourWanted(tty, { NO_COLOR: '1' })).toBe(false);
    expect(colourWanted(tty, { TERM: 'dumb' })).toBe(false);
    expect(colourWanted(pipe, { CI: 'true', FORCE_COLOR: '1' })).toBe(true);
    expect(colourWanted(tty, { FORCE_COLOR: '0' })).toBe(false);
    expect([prettyLogsWanted(tty, {}), prettyLogsWanted(tty, { CI: '1' }), prettyLogsWanted(pipe, {})]).toEqual([true, false, false]);
    expect(paint(false).green('ok')).toBe('ok');
  });

  it('takes an empty setting (a copied .env.example) as unset', () => {
    expect([setting({ JWT_SECRET: '' }, 'JWT_SECRET'), setting({}, 'JWT_SECRET'), setting({ JWT_SECRET: 's' }, 'JWT_SECRET')]).toEqual([undefined, undefined, 's']);
  });
});

/** A real Node child that runs `code`. */
const node = (code: string) => () => spawn(process.execPath, ['-e', code], { stdio: 'ignore' });
/** Whether a process runs; a zombie nobody has reaped yet (an orphan, in a container without init) has exited. */
const alive = (pid: number | undefined) => {
  try {
    process.kill(pid!, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

describe('supervision of a child', () => {
  it('restarts a child that keeps exiting, doubling the wait up to its bound', async () => {
    const lines: string[] = [];
    const supervised = supervise('crashy', node('process.exit(3)'), (line) => lines.push(line), { initialMs: 100, maxMs: 400, resetAfterMs: 60_000 });
    await waitFor(() => supervised.restarts >= 4, 'four restarts');
    await supervised.stop();
    expect(lines.slice(0, 4)).toEqual([
      'crashy exited (3); restarting in 0.1 s while the others keep serving',
      'crashy exited (3); restarting in 0.2 s while the others keep serving',
      'crashy exited (3); restarting in 0.4 s while the others keep serving',
      'crashy exited (3); restarting in 0.4 s while the others keep serving',
    ]);
  });

  it('waits the shortest time again after a child that had run long enough', async () => {
    const lines: string[] = [];
    const supervised = supervise('steady', node('setTimeout(() => process.exit(1), 300)'), (line) => lines.push(line), { initialMs: 100, maxMs: 1000, resetAfterMs: 200 });
    await waitFor(() => supervised.restarts >= 2, 'two restarts');
    await supervised.stop();
    expect(lines.slice(0, 2)).toEqual(Array(2).fill('steady exited (1); restarting in 0.1 s while the others keep serving'));
  });

  it('stops for good: the running child gets the signal, and nothing restarts it', async () => {
    const lines: string[] = [];
    const supervised = supervise('server', node('setInterval(() => {}, 1000)'), (line) => lines.push(line));
    const { pid } = supervised.child;
    await supervised.stop('SIGTERM');
    expect(supervised.child.signalCode).toBe('SIGTERM');
    expect(alive(pid)).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 700));
    expect([supervised.restarts, lines]).toEqual([0, []]);
  });
});

/** Output of a child process so far, both streams together. */
function collect(child: ChildProcess): { readonly text: string } {
  const output = { text: '' };
  for (const stream of [child.stdout, child.stderr]) stream?.on('data', (chunk: Buffer) => (output.text += chunk.toString()));
  return output;
}

describe('npm start stops what it started, however it is stopped', () => {
  const started: ChildProcess[] = [];
  afterAll(() => {
    for (const child of started) if (child.pid && child.exitCode === null && child.signalCode === null) process.kill(-child.pid, 'SIGKILL');
  });

  /**
   * test/fixtures/supervisor-tree.ts (two children under the supervision start.ts uses), under `sh` when `parent`, so
   * that the parent can die; resolves once both children run.
   */
  async function tree(parent = false) {
    const command = [process.execPath, '--conditions=source', '--import', 'tsx', 'test/fixtures/supervisor-tree.ts'];
    const child = parent
      ? spawn('sh', ['-c', `${command.map((word) => `'${word}'`).join(' ')} & wait`], { cwd: REPO_ROOT, detached: true })
      : spawn(command[0]!, command.slice(1), { cwd: REPO_ROOT, detached: true });
    started.push(child);
    const output = collect(child);
    await waitFor(() => output.text.includes('one: ') && output.text.includes('two: '), `both children up: ${output.text}`, 20_000);
    const [, supervisor, children] = /supervisor (\d+) children (\d+ \d+)/.exec(output.text)!;
    return { child, output, supervisor: Number(supervisor), children: children!.split(' ').map(Number) };
  }

  for (const signal of ['SIGTERM', 'SIGHUP', 'SIGINT'] as const) {
    it(`drains its children and exits 0 on ${signal} sent to it alone, saying so`, async () => {
      const { child, output, children } = await tree();
      const exited = new Promise((resolve) => child.once('exit', resolve));
      process.kill(child.pid!, signal);
      expect(await exited).toBe(0);
      for (const pid of children) expect(alive(pid)).toBe(false);
      expect(output.text).toContain(`${stoppingLine(signal)}\n`);
      expect(output.text).toContain(`${STOPPED_LINE}\n`);
    });
  }

  it('stops its children when its parent dies (npm SIGKILLed)', async () => {
    const { child, output, supervisor, children } = await tree(true);
    process.kill(child.pid!, 'SIGKILL');
    await waitFor(() => !alive(supervisor) && children.every((pid) => !alive(pid)), `the supervisor and its children gone: ${output.text}`, 10_000);
    expect(output.text).toContain(stoppingLine('its parent process exited'));
  });

  it('leaves no child behind when it is SIGKILLed itself', async () => {
    const { child, output, children } = await tree();
    process.kill(child.pid!, 'SIGKILL');
    await waitFor(() => children.every((pid) => !alive(pid)), `its children gone: ${output.text}`, 10_000);
  });
});

describe('npm start, as processes', () => {
  const launched: ChildProcess[] = [];
  afterAll(() => {
    // Whatever a failed assertion left running: the whole process group, as a closed terminal would.
    for (const start of launched) if (start.pid && start.exitCode === null) process.kill(-start.pid, 'SIGKILL');
  });

  /** Pids of npm start's children by service name, read from the process table. */
  const childrenOf = (pid: number) =>
    Object.fromEntries(
      execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(pid)], { encoding: 'utf8' })
        .trim()
        .split('\n')
        .map((line) => line.trim().split(/\s+/))
        .flatMap(([child, ...args]) => {
          const service = /services\/(\w+)\/src\/index\.ts|(gateway)\/src\/index\.ts/.exec(args.join(' '));
          return service ? [[service[1] ?? service[2]!, Number(child)]] : [];
        }),
    ) as Record<string, number>;

  it('restarts a killed subgraph while the others keep serving, and drains everything on Ctrl-C', async () => {
    const [gateway, users, orders, catalog] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
    // Detached: its own process group, which a terminal's Ctrl-C reaches as a whole.
    const start = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', 'scripts/start.ts'], {
      cwd: REPO_ROOT,
      env: { ...process.env, NODE_ENV: 'development', PORT: String(gateway), USERS_PORT: String(users), ORDERS_PORT: String(orders), CATALOG_PORT: String(catalog) },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    launched.push(start);
    let output = '';
    start.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    start.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => start.once('exit', (code) => resolve(code)));
    await waitFor(() => output.includes(`http://localhost:${gateway}/graphql`), `npm start's summary: ${output}`, 240_000);

    const url = `http://127.0.0.1:${gateway}/graphql`;
    const admin = await token('ADMIN', 'user-0000');
    const USER = `query ($id: ID!) { user(id: $id) { name } }`;
    const PRODUCTS = `{ products(limit: 1) { name } }`;
    const before = childrenOf(start.pid!);
    expect(Object.keys(before).sort()).toEqual(['catalog', 'gateway', 'orders', 'users']);

    // Subgraphs listen on the loopback interface only: another address of this machine finds nothing there.
    const external = Object.values(networkInterfaces()).flat().find((address) => address?.family === 'IPv4' && !address.internal);
    if (external) await expect(fetch(`http://${external.address}:${catalog}/healthz`)).rejects.toThrow();
    expect((await fetch(`http://127.0.0.1:${catalog}/healthz`)).ok).toBe(true);

    process.kill(before['catalog']!, 'SIGKILL');
    await waitFor(() => output.includes('catalog exited (SIGKILL); restarting in'), 'the supervisor reporting the exit');
    // The others serve meanwhile.
    const served = await graphql(url, USER, { variables: { id: toGlobalId('User', 'user-0001') }, token: admin });
    expect(served.body).toEqual({ data: { user: { name: expect.any(String) } } });
    await waitFor(async () => !(await graphql(url, PRODUCTS, { token: admin })).body.errors, 'the restarted catalog serving through the gateway', 120_000);
    const after = childrenOf(start.pid!);
    expect(after['catalog']).not.toBe(before['catalog']);
    expect([after['gateway'], after['users'], after['orders']]).toEqual([before['gateway'], before['users'], before['orders']]);

    process.kill(-start.pid!, 'SIGINT');
    expect(await exited).toBe(0);
    for (const pid of Object.values(after)) expect(alive(pid)).toBe(false);
    expect(output).not.toContain('gateway exited');
  }, 400_000);
  it('starts with .env.example as its .env, answers with the token it prints, and stops everything on a SIGTERM to npm alone', async () => {
    const [gateway, users, orders, catalog] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
    // A newcomer's `cp .env.example .env`: every value in it, the empty ones (JWT_SECRET=, PORT=...) included.
    const dotenv = parseEnv(readFileSync(join(REPO_ROOT, '.env.example'), 'utf8'));
    const ports = { PORT: String(gateway), USERS_PORT: String(users), ORDERS_PORT: String(orders), CATALOG_PORT: String(catalog) };
    const npm = spawn('npm', ['start'], { cwd: REPO_ROOT, env: { ...process.env, ...dotenv, ...ports }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    launched.push(npm);
    const output = collect(npm);
    await waitFor(() => output.text.includes('Try it as user1@example.com'), `npm start's summary: ${output.text}`, 240_000);

    const userToken = /export TOKEN=(\S+)/.exec(output.text)![1]!;
    const answer = await graphql(`http://127.0.0.1:${gateway}/graphql`, `query ($id: ID!) { user(id: $id) { email } }`, { variables: { id: toGlobalId('User', 'user-0001') }, token: userToken });
    expect(answer.body).toEqual({ data: { user: { email: 'user1@example.com' } } });
    // The README's own first call, its commands as written, the port aside.
    const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
    const firstCall = /## Calling the API\n\n```sh\n([\s\S]*?)```/.exec(readme)![1]!.replaceAll('localhost:4000', `localhost:${gateway}`);
    const readmeAnswer = JSON.parse(execFileSync('bash', ['-eo', 'pipefail', '-c', firstCall], { cwd: REPO_ROOT, env: { ...process.env, ...dotenv }, encoding: 'utf8' }));
    expect(readmeAnswer.errors).toBeUndefined();
    expect(readmeAnswer.data.user.orders.length).toBeGreaterThan(0);
    // The box fits a terminal of 100 columns; whatever it reads .env with says at most once that there is none.
    const box = output.text.split('\n').filter((line) => /^[╭│╰]/.test(line));
    expect(box.length).toBeGreaterThan(5);
    for (const line of box) expect(line.length).toBeLessThan(100);
    expect(output.text.split('.env not found').length).toBeLessThanOrEqual(2);

    // npm execs node: the supervisor is npm's child, the services its children.
    const supervisor = Number(execFileSync('ps', ['-o', 'pid=', '--ppid', String(npm.pid)], { encoding: 'utf8' }).trim());
    const services = childrenOf(supervisor);
    expect(Object.keys(services).sort()).toEqual(['catalog', 'gateway', 'orders', 'users']);
    process.kill(npm.pid!, 'SIGTERM');
    await waitFor(() => !alive(supervisor) && Object.values(services).every((pid) => !alive(pid)), `npm start and every service gone: ${output.text}`, 60_000);
    expect(output.text).toContain(stoppingLine('SIGTERM'));
    expect(output.text).toContain(STOPPED_LINE);
  }, 400_000);
});
