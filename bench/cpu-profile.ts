// Summarises a V8 CPU profile (node --cpu-prof): the functions with the most self time, to see where a process spends
// its CPU. `npm run bench:profile -- <file.cpuprofile> [top]`, or called by `npm run bench -- --profile`.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { SourceMapConsumer, type RawSourceMap } from 'source-map-js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
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
  return largest(byName, total, top);
}

/** The `top` largest of µs by name, as shares of `total`. */
const largest = (byName: ReadonlyMap<string, number>, total: number, top: number): SelfTime[] =>
  [...byName.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([name, micros]) => ({ name, ms: micros / 1000, share: micros / total }));

/**
 * Where a frame's code comes from: a package (`@whatwg-node/server`), a folder of ours (`gateway: caching`), a Node.js
 * module (`node:_http_server`), a native function (`native: writev`) or V8's own entries (`(garbage collector)`).
 * Frames of a bundle are mapped back to their sources through its source map, when one lies beside it.
 */
function originOf(frame: ProfileNode['callFrame'], maps: Map<string, SourceMapConsumer | undefined>): string {
  if (!frame.url) return frame.functionName.startsWith('(') ? frame.functionName : `native: ${frame.functionName || '(anonymous)'}`;
  if (frame.url.startsWith('node:')) return frame.url;
  let source = frame.url.replace(/^file:\/\//, '');
  if (!maps.has(source)) {
    const map = `${source}.map`;
    maps.set(source, existsSync(map) ? new SourceMapConsumer(JSON.parse(readFileSync(map, 'utf8')) as RawSourceMap) : undefined);
  }
  const original = maps.get(source)?.originalPositionFor({ line: frame.lineNumber + 1, column: frame.columnNumber }).source;
  if (original) source = resolve(dirname(source), original);
  const modules = source.lastIndexOf('node_modules/');
  if (modules >= 0) {
    const [scope, name] = source.slice(modules + 'node_modules/'.length).split('/');
    return scope!.startsWith('@') ? `${scope}/${name}` : scope!;
  }
  const ours = /(gateway|services\/\w+|packages\/[\w-]+)\/src\/(?:([\w-]+)\/)?/.exec(source);
  if (ours) return `${ours[1]}: ${ours[2] ?? '(top)'}`;
  return relative(process.cwd(), source);
}

/** Self time by where the code comes from (originOf), largest first, as shares of the time not idle. */
export function selfTimesByOrigin(path: string, top = 25): SelfTime[] {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as Profile;
  const maps = new Map<string, SourceMapConsumer | undefined>();
  const origins = new Map(profile.nodes.map((node) => [node.id, originOf(node.callFrame, maps)]));
  const byOrigin = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, index) => {
    const origin = origins.get(id)!;
    if (origin === '(idle)') return;
    const micros = profile.timeDeltas[index] ?? 0;
    byOrigin.set(origin, (byOrigin.get(origin) ?? 0) + micros);
    total += micros;
  });
  return largest(byOrigin, total, top);
}

export const formatSelfTimes = (times: SelfTime[]) =>
  times.map((time) => `${time.ms.toFixed(0).padStart(8)} ms ${(time.share * 100).toFixed(1).padStart(5)}%  ${time.name}`).join('\n');

if (import.meta.url === `file://${process.argv[1]}`) {
  const [file, top, by] = process.argv.slice(2);
  if (!file) throw new Error('usage: cpu-profile.ts <file.cpuprofile> [top] [--by-origin]');
  console.log(formatSelfTimes(by === '--by-origin' ? selfTimesByOrigin(file, Number(top ?? 25)) : selfTimes(file, Number(top ?? 25))));
}
