// npm run compose: supergraph.yaml -> supergraph.graphql, with a composition library (no rover binary needed).
// Exits 1 with the composition errors when the subgraphs do not compose.
//   --check                     fail instead of writing when the committed file is stale (CI)
//   --config <supergraph.yaml>  --output <supergraph.graphql>   other paths than the repository's own
import { readFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { CompositionError, SUPERGRAPH_PATH, composeSupergraph, readSupergraphConfig, writeSupergraph } from '@ordergraph/gateway/supergraph';

const { values } = parseArgs({ options: { check: { type: 'boolean', default: false }, config: { type: 'string' }, output: { type: 'string' } } });
const output = values.output ? resolve(values.output) : SUPERGRAPH_PATH;
const path = relative(process.cwd(), output);

let supergraph: string;
try {
  supergraph = composeSupergraph(readSupergraphConfig(values.config && resolve(values.config)));
} catch (error) {
  if (!(error instanceof CompositionError)) throw error;
  console.error(error.message);
  process.exit(1);
}
let current = '';
try {
  current = readFileSync(output, 'utf8');
} catch {
  // Not written yet.
}
if (current === supergraph) {
  console.log(`${path} is up to date`);
} else if (values.check) {
  console.error(`${path} is stale: run npm run compose and commit the result`);
  process.exit(1);
} else {
  // Atomically, so that a gateway polling this file never reads half of it.
  writeSupergraph(output, supergraph);
  console.log(`wrote ${path}`);
}
