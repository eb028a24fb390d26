// A private redis-server on a free port for each test file that needs Redis (never the shared one on 6379), or the
// server REDIS_URL names. With CI=true a missing redis-server is a failure, never a silent skip.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';

export interface TestRedis {
  url: string;
  port: number;
  /** Stops the server (as a crash would, for outage tests); `start()` brings it back on the same port. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops it for good and removes its files. */
  close(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export async function waitForPing(url: string, deadlineMs = 10_000): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on('error', () => {}); // connection refused while the server starts is expected
    try {
      await probe.connect();
      if ((await probe.ping()) === 'PONG') return;
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`redis at ${url} did not answer: ${String(error)}`);
    } finally {
      probe.disconnect();
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export async function startRedis(): Promise<TestRedis> {
  const external = process.env['REDIS_URL'];
  if (external) {
    await waitForPing(external);
    const noop = async () => {
      throw new Error('stop/start needs a private redis-server; unset REDIS_URL');
    };
    return { url: external, port: Number(new URL(external).port || 6379), stop: noop, start: noop, close: async () => {} };
  }

  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'ordergraph-redis-'));
  const url = `redis://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;

  const start = async () => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], {
      stdio: 'ignore',
    });
    const failed = new Promise<never>((_, reject) => {
      child!.once('error', (error) =>
        reject(new Error(`cannot start redis-server (${error.message}); install it (apt-get install redis-server) or set REDIS_URL`)),
      );
    });
    await Promise.race([waitForPing(url), failed]);
  };
  const stop = async () => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null) return;
    await new Promise((resolve) => {
      running.once('exit', resolve);
      running.kill('SIGKILL');
    });
  };

  await start();
  return {
    url,
    port,
    stop,
    start,
    async close() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
