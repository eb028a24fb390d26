// The caches' guarantee, checked the way Jepsen checks a register (issue 46): a request that begins after a write's
// response was received never reads a value older than that write, whichever of two replicas it reaches, from the
// response cache or the entity cache, by any path, across a replica's restart, a FLUSHALL and a Redis restart.
// `npm run bench:consistency` runs the same workload for longer.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { formatConsistencyReport } from '@ordergraph/testkit';
import { CONSISTENCY_GATEWAY_ENV, CONSISTENCY_PATHS, consistencyPhases, runConsistencyWorkload, startSupergraph, type Supergraph } from '@ordergraph/testkit/e2e';

let supergraph: Supergraph;
beforeAll(async () => {
  supergraph = await startSupergraph({ gateways: 2, redis: true, gatewayEnv: { ...CONSISTENCY_GATEWAY_ENV } });
});
afterAll(async () => {
  await supergraph?.stop();
});

/** Reads of each register's product that every path must have made, so that a quiet path cannot pass unseen. */
const READS_PER_PATH = 150;

it('never serves a read that began after a write an older version, by any path, through faults', { timeout: 50_000 }, async () => {
  const run = await runConsistencyWorkload({
    supergraph,
    phases: consistencyPhases(7_000),
    writers: 4,
    registersPerWriter: 2,
    readers: 8,
    redisDownMs: 2_000,
  });
  const { report } = run;
  const fromResponseCache = Object.values(run.fromResponseCache).reduce((sum, n) => sum + n, 0);
  console.log(
    `consistency: ${Math.round(run.durationMs / 1000)} s, ${fromResponseCache} answers from the response cache, entity cache lookups ${JSON.stringify(run.entityCacheLookups)}\n` +
      formatConsistencyReport(report, { staleShown: 10 }),
  );

  expect(report.paths.map(({ path }) => path).sort()).toEqual([...CONSISTENCY_PATHS].sort());
  for (const path of report.paths) expect({ path: path.path, enough: path.reads >= READS_PER_PATH }).toEqual({ path: path.path, enough: true });
  expect(report.writes).toBeGreaterThan(100);
  // Both caches answered reads: the guarantee was put to the test, not met by asking the subgraphs every time.
  expect(fromResponseCache).toBeGreaterThan(0);
  expect(run.entityCacheLookups['hit']).toBeGreaterThan(0);
  expect(report.impossible).toEqual([]);
  // By path, so that a failure reads as a summary, not as every stale read.
  const stale = Object.fromEntries(
    report.paths.filter((path) => path.stale > 0).map((path) => [path.path, `${path.stale} stale, up to ${path.worstBehindVersions} versions and ${Math.round(path.worstBehindMs)} ms behind`]),
  );
  expect(stale).toEqual({});
});
