// npm run compose: supergraph.yaml -> supergraph.graphql, with a composition library (no rover binary needed).
// `npm run compose -- --check` fails instead of writing when the committed file is stale.
import { readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { SUPERGRAPH_PATH, composeSupergraph, readSupergraphConfig } from '@ordergraph/gateway/supergraph';

const check = process.argv.includes('--check');
const supergraph = composeSupergraph(readSupergraphConfig());
const path = relative(process.cwd(), SUPERGRAPH_PATH);
let current = '';
try {
  current = readFileSync(SUPERGRAPH_PATH, 'utf8');
} catch {
  // Not written yet.
}
if (current === supergraph) {
  console.log(`${path} is up to date`);
} else if (check) {
  console.error(`${path} is stale: run npm run compose and commit the result`);
  process.exit(1);
} else {
  writeFileSync(SUPERGRAPH_PATH, supergraph);
  console.log(`wrote ${path}`);
}
