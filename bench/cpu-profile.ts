// Summarises a V8 CPU profile (node --cpu-prof): the functions with the most self time, to see where a process spends
// its CPU. `npm run bench:profile -- <file.cpuprofile> [top]`, or called by `npm run bench -- --profile`.
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

interface Profile {
  nodes: ProfileNode[];
  /** µs on the monotonic clock (process.hrtime's on Linux), as are the samples' times. */
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface SelfTime {
  name: string;
  ms: number;
  share: number;
}

/**
 * Self time per function (by name and location), largest first; with `window` (µs on the monotonic clock, as
 * `process.hrtime.bigint() / 1000n` reads it in any process on the machine), only the samples taken within it.
 */
export function selfTimes(path: string, top = 15, window?: { from: number; to: number }): SelfTime[] {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as Profile;
  const frames = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  const byName = new Map<string, number>();
  let total = 0;
  let at = profile.startTime;
  profile.samples.forEach((id, index) => {
    const frame = frames.get(id)!;
    const micros = profile.timeDeltas[index] ?? 0;
    at += micros;
    if (window && (at < window.from || at > window.to)) return;
    const where = frame.url ? ` ${relative(process.cwd(), frame.url.replace(/^file:\/\//, ''))}:${frame.lineNumber + 1}` : '';
    const name = `${frame.functionName || '(anonymous)'}${where}`;
    byName.set(name, (byName.get(name) ?? 0) + micros);
    total += micros;
  });
  return [...byName.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([name, micros]) => ({ name, ms: micros / 1000, share: micros / total }));
}

export const formatSelfTimes = (times: SelfTime[]) =>
  times.map((time) => `${time.ms.toFixed(0).padStart(8)} ms ${(time.share * 100).toFixed(1).padStart(5)}%  ${time.name}`).join('\n');

if (import.meta.url === `file://${process.argv[1]}`) {
  const [file, top] = process.argv.slice(2);
  if (!file) throw new Error('usage: cpu-profile.ts <file.cpuprofile> [top]');
  console.log(formatSelfTimes(selfTimes(file, Number(top ?? 25))));
}
