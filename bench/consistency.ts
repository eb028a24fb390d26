// npm run bench:consistency: the caches' consistency workload of e2e/consistency.test.ts (issue 46), longer. Two
// gateway replicas sharing one private Redis, in this process with the seeded subgraphs, readers on every cached path
// and writers giving products rising versions; phases of steady load, replica restarts, FLUSHALLs and Redis restarts.
// Exits 1 when any read that began after a write's acknowledgement saw an older version. `--help` lists the options.
import { execFileSync } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { formatConsistencyReport } from '@ordergraph/testkit';
import { CONSISTENCY_GATEWAY_ENV, consistencyPhases, runConsistencyWorkload, startSupergraph, type ConsistencyPhase } from '@ordergraph/testkit/e2e';

const OPTIONS = {
  phase: { type: 'string', default: '30' },
  rounds: { type: 'string', default: '1' },
  faults: { type: 'string', default: '3' },
  readers: { type: 'string', default: '12' },
  writers: { type: 'string', default: '4' },
  'registers-per-writer': { type: 'string', default: '2' },
  'write-pause': { type: 'string', default: '50' },
  'redis-down': { type: 'string', default: '3' },
  'min-reads': { type: 'string', default: '100000' },
  progress: { type: 'string', default: '5' },
  paths: { type: 'string', default: '' },
  env: { type: 'string', default: '' },
  help: { type: 'boolean', default: false },
} as const;

const HELP = `npm run bench:consistency -- [options]
  --phase 30               seconds per phase: steady, gateway restart, flushall, redis restart
  --rounds 1               times the four phases run, one after the other (numbered from the second)
  --faults 3               restarts, FLUSHALLs or Redis restarts per phase, spread evenly over it
  --readers 12             concurrent readers, each going round every path, through a replica drawn at random
  --writers 4              concurrent writers, each giving its own products rising versions, one write at a time
  --registers-per-writer 2 products each writer writes
  --write-pause 50         a writer waits up to this many ms (at random) between its writes
  --redis-down 3           seconds Redis stays away in each Redis restart
  --min-reads 100000       reads the run must make in all, or it exits 1 (too little load to say anything)
  --progress 5             seconds between progress lines
  --paths anonymous,admin  only the paths whose name contains one of these words (every path by default)
  --env "A=1 B=2"          more settings for both gateway replicas
  --help                   this text`;

const { values: options } = parseArgs({ options: OPTIONS });
if (options.help) {
  console.log(HELP);
  process.exit(0);
}
const PHASE_MS = Number(options.phase) * 1000;
const ROUNDS = Number(options.rounds);
const MIN_READS = Number(options['min-reads']);
const extraEnv = Object.fromEntries(
  options.env
    .split(/\s+/)
    .filter(Boolean)
    .map((pair) => {
      const equals = pair.indexOf('=');
      if (equals <= 0) throw new Error(`--env takes NAME=value pairs, not ${pair}`);
      return [pair.slice(0, equals), pair.slice(equals + 1)];
    }),
);

/** What the gateway under test is: the last commit of gateway/src, and whether it has changed since (the caches change often). */
function codeUnderTest(): string {
  try {
    const commit = execFileSync('git', ['log', '-1', '--format=%h %s', '--', 'gateway/src'], { encoding: 'utf8' }).trim();
    const changed = execFileSync('git', ['status', '--porcelain', '--', 'gateway/src'], { encoding: 'utf8' }).trim();
    return `${commit.slice(0, 100)}${changed ? ` (+ uncommitted changes in gateway/src: ${changed.split('\n').length} files)` : ''}`;
  } catch {
    return 'unknown (no git)';
  }
}

const phases: ConsistencyPhase[] = Array.from({ length: ROUNDS }, (_, round) =>
  consistencyPhases(PHASE_MS, Number(options.faults)).map((phase) => ({ ...phase, name: round === 0 ? phase.name : `${phase.name} #${round + 1}` })),
).flat();

const seconds = (ms: number) => `${(ms / 1000).toFixed(0)} s`;
console.log(`consistency of the caches, gateway/src at ${codeUnderTest()}`);
console.log(
  `${cpus().length} cores, load ${loadavg()[0]!.toFixed(2)}; ${options.readers} readers, ${options.writers} writers x ${options['registers-per-writer']} products, ` +
    `${phases.length} phases of ${options.phase} s, ${options.faults} faults each`,
);

const supergraph = await startSupergraph({ gateways: 2, redis: true, gatewayEnv: { ...CONSISTENCY_GATEWAY_ENV, ...extraEnv } });
let exitCode = 1;
try {
  let lastReads = 0;
  let lastAt = performance.now();
  const run = await runConsistencyWorkload({
    supergraph,
    phases,
    readers: Number(options.readers),
    writers: Number(options.writers),
    registersPerWriter: Number(options['registers-per-writer']),
    writePauseMs: Number(options['write-pause']),
    redisDownMs: Number(options['redis-down']) * 1000,
    progressEveryMs: Number(options.progress) * 1000,
    ...(options.paths ? { paths: options.paths.split(',') } : {}),
    onFault: (what, elapsedMs) => console.log(`${seconds(elapsedMs).padStart(5)}  ${what}`),
    onProgress: ({ phase, elapsedMs, report }) => {
      const now = performance.now();
      const rate = ((report.reads - lastReads) * 1000) / (now - lastAt);
      [lastReads, lastAt] = [report.reads, now];
      const stalePaths = report.paths.filter(({ stale }) => stale > 0).map(({ path, stale }) => `${path} ${stale}`);
      console.log(
        `${seconds(elapsedMs).padStart(5)}  ${phase.padEnd(18)} ${String(report.reads).padStart(7)} reads (${Math.round(rate)}/s, ${report.failedReads} failed), ` +
          `${report.writes} writes (${report.failedWrites} failed), ${report.stale.length} stale${stalePaths.length ? `: ${stalePaths.join(', ')}` : ''}`,
      );
    },
  });
  const { report } = run;
  const answered = Object.entries(run.requests).map(([path, n]) => `${path} ${n}${run.fromResponseCache[path] ? ` (${run.fromResponseCache[path]} by the response cache)` : ''}`);
  console.log(`\n${seconds(run.durationMs)} of load; requests answered per path: ${answered.join(', ')}`);
  console.log(`entity cache lookups: ${Object.entries(run.entityCacheLookups).map(([result, n]) => `${n} ${result}`).join(', ')}`);
  console.log(formatConsistencyReport(report, { staleShown: 20 }));
  const enough = report.reads >= MIN_READS;
  if (!enough) console.log(`too few reads: ${report.reads} of the ${MIN_READS} asked for (--min-reads)`);
  const consistent = report.stale.length === 0 && report.impossible.length === 0;
  console.log(consistent ? 'consistent: no stale read' : `NOT consistent: ${report.stale.length} stale, ${report.impossible.length} impossible`);
  exitCode = consistent && enough ? 0 : 1;
} finally {
  await supergraph.stop();
}
process.exit(exitCode);
