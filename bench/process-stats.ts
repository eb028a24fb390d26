// What the benchmark reads of the processes it started, from Linux's /proc: CPU time, resident memory and open TCP
// connections.
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ, 100 on every Linux that Node.js supports). */
const TICKS_PER_SECOND = 100;

/** User plus system CPU time a process has used so far, in milliseconds. */
export function processCpuMs(pid: number): number {
  // The command name (field 2) may hold spaces; the fields after its closing parenthesis do not.
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
}

/** A process's resident set size now, in MB; 0 once it has exited (a sampler may outlive it by one tick). */
export function processRssMb(pid: number): number {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw error;
  }
  const line = /^VmRSS:\s+(\d+) kB$/m.exec(status);
  return line ? Number(line[1]) / 1024 : 0;
}

/**
 * A process's established TCP connections to each of `remotePorts` (its client side, e.g. a gateway's connections to
 * a subgraph): its socket inodes (/proc/<pid>/fd) matched against the kernel's tables (/proc/<pid>/net/tcp, tcp6).
 */
export function processConnections(pid: number, remotePorts: readonly number[]): Map<number, number> {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      if (target.startsWith('socket:[')) inodes.add(target.slice(8, -1));
    } catch {
      // closed since the listing
    }
  }
  const counts = new Map(remotePorts.map((port) => [port, 0]));
  for (const table of ['tcp', 'tcp6']) {
    let text: string;
    try {
      text = readFileSync(`/proc/${pid}/net/${table}`, 'utf8');
    } catch {
      continue; // no IPv6
    }
    for (const line of text.split('\n').slice(1)) {
      // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
      const fields = line.trim().split(/\s+/);
      if (fields.length < 10 || fields[3] !== '01' || !inodes.has(fields[9]!)) continue; // 01: ESTABLISHED
      const port = parseInt(fields[2]!.split(':')[1]!, 16);
      const count = counts.get(port);
      if (count !== undefined) counts.set(port, count + 1);
    }
  }
  return counts;
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
