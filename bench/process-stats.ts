// What the benchmark reads of the processes it started, from Linux's /proc: CPU time and resident memory.
import { readFileSync } from 'node:fs';

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ, 100 on every Linux that Node.js supports). */
const TICKS_PER_SECOND = 100;

/** User plus system CPU time a process has used so far, in milliseconds. */
export function processCpuMs(pid: number): number {
  // The command name (field 2) may hold spaces; the fields after its closing parenthesis do not.
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
}

/** A process's resident set size now, in MB. */
export function processRssMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+) kB$/m);
  return line ? Number(line[1]) / 1024 : 0;
}

/** JSON with every object's keys sorted, so two gateways' answers compare by content, not by key order. */
export function canonicalJson(text: string): string {
  const sorted = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(sorted);
    if (value && typeof value === 'object') {
      return Object.fromEntries(Object.keys(value).sort().map((key) => [key, sorted((value as Record<string, unknown>)[key])]));
    }
    return value;
  };
  return JSON.stringify(sorted(JSON.parse(text)));
}
