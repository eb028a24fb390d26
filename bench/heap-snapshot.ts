// Summarises V8 heap snapshots (node --heapsnapshot-signal): memory by constructor, and what one process holds that
// another does not. Used by `npm run bench -- --heap <dir>` to compare our gateway with the bare runtime.
import { readFileSync } from 'node:fs';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

/** Self size in bytes by kind of object (`object:Name`, `closure:name`, `string`, `array`...). */
export function heapByConstructor(path: string): Map<string, number> {
  const heap = JSON.parse(readFileSync(path, 'utf8')) as Snapshot;
  const fields = heap.snapshot.meta.node_fields;
  const [typeAt, nameAt, sizeAt] = [fields.indexOf('type'), fields.indexOf('name'), fields.indexOf('self_size')];
  const types = heap.snapshot.meta.node_types[0];
  const sizes = new Map<string, number>();
  for (let i = 0; i < heap.nodes.length; i += fields.length) {
    const type = types[heap.nodes[i + typeAt]!]!;
    const kind = type === 'object' || type === 'closure' ? `${type}:${heap.strings[heap.nodes[i + nameAt]!]}` : type;
    sizes.set(kind, (sizes.get(kind) ?? 0) + heap.nodes[i + sizeAt]!);
  }
  return sizes;
}

const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MB`;

/** The kinds of object `ours` holds more of than `other`, largest difference first. */
export function compareHeaps(ours: string, other: string, top = 15): string {
  const [a, b] = [heapByConstructor(ours), heapByConstructor(other)];
  const total = (sizes: Map<string, number>) => [...sizes.values()].reduce((sum, size) => sum + size, 0);
  const differences = [...a.entries()].map(([kind, size]) => [kind, size - (b.get(kind) ?? 0)] as const).sort((x, y) => y[1] - x[1]);
  return [
    `heap ours ${mb(total(a))}, other ${mb(total(b))}; what ours holds more of:`,
    ...differences.slice(0, top).map(([kind, size]) => `${mb(size).padStart(10)}  ${kind}`),
  ].join('\n');
}
