// A history of writes and reads of registers and its checker, in the spirit of Jepsen's register tests: a read that
// began after a write of its register was acknowledged must see that write's version or a later one, whichever
// replica, cache or path answered it. Times are performance.now() of the one process that records them.

/** An acknowledged write: the register held `version` from some moment between invokedAt and acknowledgedAt. */
export interface Write {
  register: string;
  version: number;
  invokedAt: number;
  acknowledgedAt: number;
}

/**
 * A write whose answer never came or was an error: indeterminate, it may or may not have taken effect, so it sets no
 * bound on later reads; a read may still see its version.
 */
export interface FailedWrite {
  register: string;
  version: number;
  invokedAt: number;
  endedAt: number;
  error: string;
}

/** What one read of one register saw (a list read gives one per register it holds). Version 0: the seeded value. */
export interface Read {
  register: string;
  path: string;
  replica: number;
  startedAt: number;
  endedAt: number;
  version: number;
}

/** A read that got no version: an HTTP or GraphQL error, no answer, or an answer without the register. */
export interface FailedRead {
  path: string;
  replica: number;
  startedAt: number;
  endedAt: number;
  error: string;
}

/** From `startedAt` on, operations belong to the phase `name` (until the next phase starts). */
export interface Phase {
  name: string;
  startedAt: number;
}

export interface History {
  writes: Write[];
  failedWrites: FailedWrite[];
  reads: Read[];
  failedReads: FailedRead[];
  phases: Phase[];
}

/** Collects a history as operations complete; `history` is read by `checkHistory` at any time. */
export class HistoryRecorder {
  readonly history: History = { writes: [], failedWrites: [], reads: [], failedReads: [], phases: [] };

  phase(name: string, at = performance.now()): void {
    this.history.phases.push({ name, startedAt: at });
  }

  write(write: Write): void {
    this.history.writes.push(write);
  }

  failedWrite(write: FailedWrite): void {
    this.history.failedWrites.push(write);
  }

  read(read: Read): void {
    this.history.reads.push(read);
  }

  failedRead(read: FailedRead): void {
    this.history.failedReads.push(read);
  }
}

/** A read that began after write `required` of its register had been acknowledged, and saw an older version. */
export interface StaleRead {
  read: Read;
  phase: string | undefined;
  /** The highest version acknowledged before the read began. */
  required: number;
  /** required - read.version. */
  behindVersions: number;
  /** From the acknowledgement of the first write the read missed (the oldest it should have seen) to its start. */
  behindMs: number;
}

/** A read of a version whose write had not even been sent when the read ended (or never was). */
export interface ImpossibleRead {
  read: Read;
  phase: string | undefined;
}

/** A read that overlapped a write of its register, and how far behind the newest version sent before it ended it was. */
export interface OverlapGap {
  read: Read;
  /** The newest version whose write was sent before the read ended, minus the version read (0 or more). */
  gap: number;
}

export interface PathReport {
  path: string;
  reads: number;
  failed: number;
  /** Reads per replica, by index. */
  byReplica: number[];
  stale: number;
  worstBehindVersions: number;
  worstBehindMs: number;
  /** Reads that overlapped a write of their register (the checker holds them to the writes acknowledged before). */
  concurrent: number;
  worstOverlapGap: number;
}

export interface PhaseReport {
  phase: string;
  reads: number;
  failed: number;
  stale: number;
  writes: number;
  failedWrites: number;
}

export interface ConsistencyReport {
  reads: number;
  failedReads: number;
  writes: number;
  failedWrites: number;
  /** Every stale read, in the order they began. */
  stale: StaleRead[];
  impossible: ImpossibleRead[];
  /** The read with the largest version gap among those concurrent with a write (informational: allowed). */
  worstOverlap: OverlapGap | undefined;
  /** By path, in the order paths first appear in the history. */
  paths: PathReport[];
  /** By phase, in the order they started (operations before the first phase under '-'). */
  phases: PhaseReport[];
  /** Why reads and writes failed, the most frequent first. */
  failures: { error: string; reads: number; writes: number }[];
}

/** The last index in ascending `values` holding a value strictly below `bound`, or -1. */
function lastBelow(values: readonly number[], bound: number): number {
  let low = 0;
  let high = values.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (values[middle]! < bound) low = middle + 1;
    else high = middle;
  }
  return low - 1;
}

/**
 * One register's writes, indexed for the checker's questions: by acknowledgement (which version a read that began at t
 * must see at least, and when the first write it missed was acknowledged) and by invocation (which versions had been
 * sent before a read ended, and whether one was in flight while it ran).
 */
class RegisterWrites {
  private readonly acked: number[];
  /** The highest version among the writes acknowledged up to each index of `acked`: never falls. */
  private readonly ackedMax: number[];
  private readonly invoked: number[];
  /** The highest version among the writes (failed ones too) sent up to each index of `invoked`. */
  private readonly invokedMax: number[];
  /** The latest end (acknowledgement or failure) among the writes sent up to each index of `invoked`. */
  private readonly invokedLatestEnd: number[];
  private readonly firstSent = new Map<number, number>();

  constructor(writes: readonly Write[], failed: readonly FailedWrite[]) {
    const byAck = [...writes].sort((a, b) => a.acknowledgedAt - b.acknowledgedAt);
    this.acked = byAck.map((write) => write.acknowledgedAt);
    this.ackedMax = runningMax(byAck.map((write) => write.version));
    const sent = [
      ...writes.map(({ version, invokedAt, acknowledgedAt }) => ({ version, invokedAt, endedAt: acknowledgedAt })),
      ...failed.map(({ version, invokedAt, endedAt }) => ({ version, invokedAt, endedAt })),
    ].sort((a, b) => a.invokedAt - b.invokedAt);
    this.invoked = sent.map((write) => write.invokedAt);
    this.invokedMax = runningMax(sent.map((write) => write.version));
    this.invokedLatestEnd = runningMax(sent.map((write) => write.endedAt));
    for (const { version, invokedAt } of sent) if (!this.firstSent.has(version)) this.firstSent.set(version, invokedAt);
  }

  /** The highest version acknowledged strictly before `at`; 0 (the seeded value) when none was. */
  requiredAt(at: number): number {
    const i = lastBelow(this.acked, at);
    return i < 0 ? 0 : this.ackedMax[i]!;
  }

  /** When the first write newer than `version` was acknowledged (the read missed it from then on). */
  firstAckAfter(version: number): number {
    // ackedMax never falls: the first index past `version` is the first such write acknowledged.
    return this.acked[lastBelow(this.ackedMax, version + 1) + 1]!;
  }

  /** Whether a read that ended at `endedAt` could have seen `version`: the seeded one, or one sent by then. */
  possible(version: number, endedAt: number): boolean {
    const sentAt = this.firstSent.get(version);
    return version === 0 || (sentAt !== undefined && sentAt < endedAt);
  }

  /** How far the read was behind the newest version sent before it ended, when a write was in flight while it ran. */
  overlapGap(read: Read): number | undefined {
    const i = lastBelow(this.invoked, read.endedAt);
    if (i < 0 || this.invokedLatestEnd[i]! <= read.startedAt) return undefined;
    return Math.max(0, this.invokedMax[i]! - read.version);
  }
}

function runningMax(values: readonly number[]): number[] {
  let max = -Infinity;
  return values.map((value) => (max = Math.max(max, value)));
}

/** The phase an operation that began at `at` belongs to: the last one started by then. */
function phaseAt(phases: readonly Phase[], at: number): string | undefined {
  let found: string | undefined;
  for (const phase of phases) if (phase.startedAt <= at) found = phase.name;
  return found;
}

/** Operations before the first phase. */
const NO_PHASE = '-';

/**
 * Checks a history: every read that began after the acknowledgement of write n of its register and saw a version
 * below n is stale; every read of a version not yet sent when it ended is impossible. Reads that ran beside a write
 * are held to what was acknowledged before they began, and their distance from the newest version sent is reported
 * apart, for information.
 */
export function checkHistory(history: History): ConsistencyReport {
  const written = new Map<string, { writes: Write[]; failed: FailedWrite[] }>();
  const writtenTo = (register: string) => {
    let found = written.get(register);
    if (!found) written.set(register, (found = { writes: [], failed: [] }));
    return found;
  };
  for (const write of history.writes) writtenTo(write.register).writes.push(write);
  for (const write of history.failedWrites) writtenTo(write.register).failed.push(write);
  const registers = new Map<string, RegisterWrites>();
  const writesOf = (register: string) => {
    let writes = registers.get(register);
    if (!writes) {
      const { writes: acknowledged, failed } = writtenTo(register);
      registers.set(register, (writes = new RegisterWrites(acknowledged, failed)));
    }
    return writes;
  };
  const phases = [...history.phases].sort((a, b) => a.startedAt - b.startedAt);
  const phaseReports = new Map<string, PhaseReport>();
  const phaseReport = (at: number) => {
    const name = phaseAt(phases, at) ?? NO_PHASE;
    let report = phaseReports.get(name);
    if (!report) phaseReports.set(name, (report = { phase: name, reads: 0, failed: 0, stale: 0, writes: 0, failedWrites: 0 }));
    return report;
  };
  for (const phase of phases) phaseReport(phase.startedAt);
  const pathReports = new Map<string, PathReport>();
  const pathReport = (path: string) => {
    let report = pathReports.get(path);
    if (!report) {
      report = { path, reads: 0, failed: 0, byReplica: [], stale: 0, worstBehindVersions: 0, worstBehindMs: 0, concurrent: 0, worstOverlapGap: 0 };
      pathReports.set(path, report);
    }
    return report;
  };

  const stale: StaleRead[] = [];
  const impossible: ImpossibleRead[] = [];
  let worstOverlap: OverlapGap | undefined;
  for (const read of [...history.reads].sort((a, b) => a.startedAt - b.startedAt)) {
    const writes = writesOf(read.register);
    const byPath = pathReport(read.path);
    const byPhase = phaseReport(read.startedAt);
    byPath.reads++;
    byPath.byReplica[read.replica] = (byPath.byReplica[read.replica] ?? 0) + 1;
    byPhase.reads++;
    if (!writes.possible(read.version, read.endedAt)) impossible.push({ read, phase: phaseAt(phases, read.startedAt) });
    const required = writes.requiredAt(read.startedAt);
    if (read.version < required) {
      const found: StaleRead = {
        read,
        phase: phaseAt(phases, read.startedAt),
        required,
        behindVersions: required - read.version,
        behindMs: read.startedAt - writes.firstAckAfter(read.version),
      };
      stale.push(found);
      byPath.stale++;
      byPath.worstBehindVersions = Math.max(byPath.worstBehindVersions, found.behindVersions);
      byPath.worstBehindMs = Math.max(byPath.worstBehindMs, found.behindMs);
      byPhase.stale++;
      continue;
    }
    const gap = writes.overlapGap(read);
    if (gap === undefined) continue;
    byPath.concurrent++;
    byPath.worstOverlapGap = Math.max(byPath.worstOverlapGap, gap);
    if (!worstOverlap || gap > worstOverlap.gap) worstOverlap = { read, gap };
  }
  for (const failed of history.failedReads) {
    pathReport(failed.path).failed++;
    phaseReport(failed.startedAt).failed++;
  }
  for (const write of history.writes) phaseReport(write.invokedAt).writes++;
  for (const write of history.failedWrites) phaseReport(write.invokedAt).failedWrites++;
  const failures = new Map<string, { error: string; reads: number; writes: number }>();
  const failure = (error: string) => {
    let found = failures.get(error);
    if (!found) failures.set(error, (found = { error, reads: 0, writes: 0 }));
    return found;
  };
  for (const { error } of history.failedReads) failure(error).reads++;
  for (const { error } of history.failedWrites) failure(error).writes++;

  return {
    reads: history.reads.length,
    failedReads: history.failedReads.length,
    writes: history.writes.length,
    failedWrites: history.failedWrites.length,
    stale,
    impossible,
    worstOverlap,
    paths: [...pathReports.values()],
    phases: [...phaseReports.values()],
    failures: [...failures.values()].sort((a, b) => b.reads + b.writes - (a.reads + a.writes)),
  };
}

const round = (ms: number) => (ms < 10 ? ms.toFixed(1) : String(Math.round(ms)));

/** The report as a few lines of text: totals, a row per path and per phase, and the first stale reads. */
export function formatConsistencyReport(report: ConsistencyReport, options: { staleShown?: number } = {}): string {
  const pathWidth = Math.max(4, ...report.paths.map(({ path }) => path.length));
  const lines = [
    `${report.reads} reads (${report.failedReads} failed), ${report.writes} writes (${report.failedWrites} failed): ` +
      `${report.stale.length} stale, ${report.impossible.length} impossible` +
      (report.worstOverlap ? `, worst gap of a read beside a write ${report.worstOverlap.gap} (${report.worstOverlap.read.path})` : ''),
    `${'path'.padEnd(pathWidth)}  reads  replicas     failed  stale  behind (versions, ms)  beside a write  worst gap`,
  ];
  for (const path of report.paths) {
    const behind = path.stale > 0 ? `${path.worstBehindVersions}, ${round(path.worstBehindMs)}` : '-';
    lines.push(
      `${path.path.padEnd(pathWidth)}  ${String(path.reads).padStart(5)}  ${Array.from(path.byReplica, (n) => n ?? 0).join('/').padEnd(11)}  ${String(path.failed).padStart(6)}  ` +
        `${String(path.stale).padStart(5)}  ${behind.padEnd(21)}  ${String(path.concurrent).padStart(14)}  ${String(path.worstOverlapGap).padStart(9)}`,
    );
  }
  lines.push(`phases: ${report.phases.map((p) => `${p.phase} ${p.reads} reads (${p.failed} failed) ${p.writes} writes (${p.failedWrites} failed) ${p.stale} stale`).join('; ')}`);
  for (const { error, reads, writes } of report.failures.slice(0, 5)) lines.push(`failed: ${reads} reads, ${writes} writes: ${error.slice(0, 160)}`);
  for (const found of report.stale.slice(0, options.staleShown ?? 5)) {
    const { read } = found;
    lines.push(
      `stale: ${read.path} of ${read.register} through replica ${read.replica} in ${found.phase ?? NO_PHASE}: version ${read.version}, ` +
        `${found.behindVersions} behind ${found.required}, ${round(found.behindMs)} ms after the first write it missed was acknowledged`,
    );
  }
  for (const { read, phase } of report.impossible.slice(0, options.staleShown ?? 5)) {
    lines.push(`impossible: ${read.path} of ${read.register} through replica ${read.replica} in ${phase ?? NO_PHASE}: version ${read.version} not sent before the read ended`);
  }
  return lines.join('\n');
}
