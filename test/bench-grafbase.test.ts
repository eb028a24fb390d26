// Grafbase as a contender in npm run bench (bench/grafbase.ts): its binary, configured by the benchmark's code, in
// front of the seeded subgraphs that serve unsigned calls (started as the benchmark starts them, from source here),
// answers a scenario as our gateway does, and the process the benchmark measures is the binary itself. The package
// holds a Linux x86-64 binary only: elsewhere the test is skipped, saying why; with CI=true that is a failure.
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '@ordergraph/composition';
import { freePort, startRedis, token, type TestRedis } from '@ordergraph/testkit';
import { startSupergraph, type Supergraph } from '@ordergraph/testkit/e2e';
import { grafbaseBinary, startGrafbase } from '../bench/grafbase.js';
import { canonicalJson, processCpuMs, processRssMb } from '../bench/process-stats.js';
import { SECRET, UNSIGNED_SUBGRAPH_ENV, startSubgraphProcesses, stop, stopAll } from '../bench/processes.js';
import { SCENARIOS, type IdenticalScenario } from '../bench/scenarios.js';

const binary = grafbaseBinary();
const unavailable = 'unavailable' in binary ? binary.unavailable : undefined;
const CI = process.env['CI'] === 'true';
if (unavailable && !CI) console.warn(`test/bench-grafbase.test.ts skipped: ${unavailable}`);

it.runIf(CI)('Grafbase can run where CI runs', () => {
  expect(unavailable, "the benchmark's Grafbase cannot run here").toBeUndefined();
});

describe.skipIf(unavailable !== undefined)('Grafbase in npm run bench', () => {
  let ours: Supergraph | undefined;
  let redis: TestRedis | undefined;
  let grafbase: ChildProcess | undefined;
  let grafbaseUrl = '';
  // Under bench/out (git-ignored), apart from a benchmark's own bench/out/grafbase.
  mkdirSync(resolve(REPO_ROOT, 'bench/out'), { recursive: true });
  const dir = mkdtempSync(resolve(REPO_ROOT, 'bench/out/grafbase-test-'));

  beforeAll(async () => {
    if ('unavailable' in binary) return;
    // Ours in-process, on its own seeded subgraphs, with the benchmark's token secret.
    ours = await startSupergraph({ env: { JWT_SECRET: SECRET } });
    redis = await startRedis();
    const subgraphs = await startSubgraphProcesses(redis.url, { env: UNSIGNED_SUBGRAPH_ENV, entry: (workspace) => `${workspace}/src/index.ts` });
    const port = await freePort();
    grafbase = await startGrafbase(binary.path, subgraphs.urls, port, dir);
    grafbaseUrl = `http://127.0.0.1:${port}/graphql`;
  }, 120_000);

  afterAll(async () => {
    await stopAll(5_000);
    await redis?.close();
    await ours?.stop();
    rmSync(dir, { recursive: true, force: true });
  }, 30_000);

  it("answers scenario (b), a user with orders, items and products from three subgraphs, as ours does, the caller's token forwarded", async () => {
    const scenario = SCENARIOS.find((s) => s.id === 'b') as IdenticalScenario;
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${await token('ADMIN', 'user-0000', { secret: SECRET })}` };
    const body = JSON.stringify({ query: scenario.query, variables: scenario.variables });
    const [fromOurs, fromGrafbase] = await Promise.all([ours!.url, grafbaseUrl].map((url) => fetch(url, { method: 'POST', headers, body }).then((response) => response.text())));
    expect(JSON.parse(fromGrafbase!)).not.toHaveProperty('errors');
    expect(JSON.parse(fromGrafbase!).data.user.orders.length).toBeGreaterThan(0);
    expect(canonicalJson(fromGrafbase!)).toBe(canonicalJson(fromOurs!));
  });

  it('is measured as the binary itself: the pid the benchmark reads is the CLI, with no wrapper between', () => {
    const { pid } = grafbase!;
    expect(readlinkSync(`/proc/${pid}/exe`)).toBe((binary as { path: string }).path);
    expect(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').slice(1, 2)).toEqual(['dev']);
    expect(processCpuMs(pid!)).toBeGreaterThan(0);
    expect(processRssMb(pid!)).toBeGreaterThan(10);
  });

  it('stops on SIGTERM', async () => {
    const started = performance.now();
    await stop(grafbase!, 10_000);
    expect(grafbase!.signalCode ?? grafbase!.exitCode).not.toBeNull();
    // Not the SIGKILL that stop() sends after its grace.
    expect(grafbase!.signalCode).not.toBe('SIGKILL');
    expect(performance.now() - started).toBeLessThan(10_000);
  });
});
