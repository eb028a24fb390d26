// The deployed baseline: one SDL file per subgraph (schemas/baseline/<subgraph>.graphql), the schemas of the last
// published release. `npm run schema:publish` moves it at release; `npm run schema:check` compares against it.
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { REPO_ROOT, type SubgraphSource } from '@ordergraph/composition';

export const BASELINE_DIR = resolve(REPO_ROOT, 'schemas/baseline');

/** Baseline SDL by subgraph name; an absent directory is an empty baseline. */
export function readBaselines(dir = BASELINE_DIR): Record<string, string> {
  let files: string[];
  try {
    files = readdirSync(dir).filter((file) => file.endsWith('.graphql'));
  } catch {
    return {};
  }
  return Object.fromEntries(files.map((file) => [basename(file, '.graphql'), readFileSync(resolve(dir, file), 'utf8')]));
}

/** Makes the given subgraphs' schemas the baseline: writes each one and drops baselines of subgraphs no longer composed. */
export function publishBaselines(subgraphs: SubgraphSource[], dir = BASELINE_DIR): { written: string[]; removed: string[] } {
  mkdirSync(dir, { recursive: true });
  const names = new Set(subgraphs.map((subgraph) => subgraph.name));
  const removed = Object.keys(readBaselines(dir)).filter((name) => !names.has(name));
  for (const name of removed) rmSync(resolve(dir, `${name}.graphql`));
  for (const subgraph of subgraphs) writeFileSync(resolve(dir, `${subgraph.name}.graphql`), subgraph.typeDefs);
  return { written: [...names], removed };
}
