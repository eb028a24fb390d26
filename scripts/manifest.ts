// npm run manifest: the persisted-query manifest for PERSISTED_QUERIES=allowlist, built by Apollo's own generator so
// each body and id is what Apollo Client sends. --documents <glob> (repeatable), --output <file>; default: the example.
import { relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { generatePersistedQueryManifest } from '@apollo/generate-persisted-query-manifest';
import { REPO_ROOT, writeSupergraph } from '@ordergraph/composition';

const EXAMPLE_DOCUMENTS = 'examples/client/src/operations/*.graphql';
const EXAMPLE_MANIFEST = 'examples/client/persisted-query-manifest.json';

const { values } = parseArgs({ options: { documents: { type: 'string', multiple: true }, output: { type: 'string' } } });
const documents = values.documents ?? [resolve(REPO_ROOT, EXAMPLE_DOCUMENTS)];
const output = resolve(values.output ?? resolve(REPO_ROOT, EXAMPLE_MANIFEST));
try {
  const manifest = await generatePersistedQueryManifest({ documents }, undefined);
  writeSupergraph(output, `${JSON.stringify(manifest, null, 2)}\n`);
  console.log(`wrote ${relative(process.cwd(), output)} with ${manifest.operations.length} operations`);
} catch (error) {
  // The generator reports each bad document (parse errors, anonymous or duplicate operation names) before failing.
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
}
