// Redis beyond one node, for tests: a Sentinel-watched primary with a replica, and a three-primary Cluster, each made
// of real redis-server processes on free ports.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { freePort, waitForPing } from './redis.js';

const run = promisify(execFile);

interface Node {
  port: number;
  process: ChildProcess;
}

function spawnRedis(args: string[], dir: string): ChildProcess {
  const child = spawn('redis-server', args, { stdio: 'ignore', cwd: dir });
  child.once('error', () => {}); // reported by waitForPing timing out, with the reason in the test's failure
  return child;
}

async function kill(node: Node): Promise<void> {
  if (node.process.exitCode !== null || node.process.signalCode !== null) return;
  await new Promise((resolve) => {
    node.process.once('exit', resolve);
    node.process.kill('SIGKILL');
  });
}

async function startNode(dir: string, extra: string[] = []): Promise<Node> {
  const port = await freePort();
  const process = spawnRedis(['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, ...extra], dir);
  await waitForPing(`redis://127.0.0.1:${port}`);
  return { port, process };
}

async function until(check: () => Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export interface TestSentinel {
  /** host:port,host:port of the sentinels, as REDIS_SENTINELS takes them. */
  sentinels: string;
  master: string;
  /** The port of the current primary. */
  primaryPort(): Promise<number>;
  /**
   * Kills the primary as a crash would (or with `hang`, stops it: its connections stay open and answer nothing) and
   * resolves once the sentinels have promoted the replica.
   */
  failover(options?: { hang?: boolean }): Promise<void>;
  close(): Promise<void>;
}

// The same binary runs a sentinel with --sentinel; the Cluster is formed by redis-cli --cluster create.
export async function startRedisSentinel(master = 'ordergraph'): Promise<TestSentinel> {
  const dir = mkdtempSync(join(tmpdir(), 'ordergraph-sentinel-'));
  const nodes: Node[] = [];
  try {
    const primary = await startNode(dir);
    nodes.push(primary);
    nodes.push(await startNode(dir, ['--replicaof', '127.0.0.1', String(primary.port), '--dbfilename', 'replica.rdb']));
    const sentinelPorts: number[] = [];
    for (let i = 0; i < 3; i++) {
      const port = await freePort();
      const config = join(dir, `sentinel-${i}.conf`);
      writeFileSync(
        config,
        [
          `port ${port}`,
          'bind 127.0.0.1',
          `sentinel monitor ${master} 127.0.0.1 ${primary.port} 2`,
          `sentinel down-after-milliseconds ${master} 1000`,
          `sentinel failover-timeout ${master} 5000`,
        ].join('\n'),
      );
      nodes.push({ port, process: spawnRedis([config, '--sentinel'], dir) });
      sentinelPorts.push(port);
      await waitForPing(`redis://127.0.0.1:${port}`);
    }
    const ask = async () => {
      const sentinel = new Redis(sentinelPorts[0]!, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0 });
      try {
        await sentinel.connect();
        const [, port] = (await sentinel.call('SENTINEL', 'get-master-addr-by-name', master)) as [string, string];
        return Number(port);
      } finally {
        sentinel.disconnect();
      }
    };
    // Ready once the replica is in sync and every sentinel knows the others (needed for a quorum).
    await until(async () => {
      const replica = new Redis(nodes[1]!.port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0 });
      try {
        await replica.connect();
        return (await replica.info('replication')).includes('master_link_status:up');
      } finally {
        replica.disconnect();
      }
    }, 'the replica to sync');
    await until(async () => {
      const sentinel = new Redis(sentinelPorts[0]!, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0 });
      try {
        await sentinel.connect();
        const info = (await sentinel.call('SENTINEL', 'master', master)) as string[];
        return Number(info[info.indexOf('num-other-sentinels') + 1]) === 2;
      } finally {
        sentinel.disconnect();
      }
    }, 'the sentinels to find each other');
    return {
      sentinels: sentinelPorts.map((port) => `127.0.0.1:${port}`).join(','),
      master,
      primaryPort: ask,
      async failover({ hang = false } = {}) {
        const before = await ask();
        const primary = nodes.find((node) => node.port === before)!;
        // SIGKILL at close ends a stopped process too.
        if (hang) primary.process.kill('SIGSTOP');
        else await kill(primary);
        await until(async () => (await ask()) !== before, 'the sentinels to promote the replica');
      },
      async close() {
        await Promise.all(nodes.map(kill));
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await Promise.all(nodes.map(kill));
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

export interface TestCluster {
  /** host:port of every primary, as REDIS_CLUSTER_NODES takes them. */
  nodes: string;
  ports: number[];
  close(): Promise<void>;
}

/** Three primaries, no replicas, the 16384 slots split between them. */
export async function startRedisCluster(): Promise<TestCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'ordergraph-cluster-'));
  const nodes: Node[] = [];
  try {
    for (let i = 0; i < 3; i++) {
      nodes.push(await startNode(dir, ['--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${i}.conf`, '--cluster-node-timeout', '2000']));
    }
    const addresses = nodes.map((node) => `127.0.0.1:${node.port}`);
    await run('redis-cli', ['--cluster', 'create', ...addresses, '--cluster-replicas', '0', '--cluster-yes']).catch((error: Error) => {
      throw new Error(`cannot form a Redis Cluster with redis-cli (${error.message}); install redis-tools`);
    });
    for (const node of nodes) {
      await until(async () => {
        const client = new Redis(node.port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0 });
        try {
          await client.connect();
          return (await client.cluster('INFO')).includes('cluster_state:ok');
        } finally {
          client.disconnect();
        }
      }, 'the cluster to be formed');
    }
    return {
      nodes: addresses.join(','),
      ports: nodes.map((node) => node.port),
      async close() {
        await Promise.all(nodes.map(kill));
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await Promise.all(nodes.map(kill));
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}
