// npm run manifest: the trusted-documents manifest (Apollo's format) built from a client's .graphql documents by
// Apollo's own generator, so each body and id is what Apollo Client sends.
//   npm run manifest -- [<folder or glob> ...] [--documents <glob>]... [--output <manifest.json>]
import { existsSync, statSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { generatePersistedQueryManifest } from '@apollo/generate-persisted-query-manifest';
import { REPO_ROOT, writeSupergraph } from '@ordergraph/composition';

const EXAMPLE_DOCUMENTS = 'examples/client/src/operations/*.graphql';
const EXAMPLE_MANIFEST = 'examples/client/persisted-query-manifest.json';

/** A folder stands for the documents under it; anything else is a glob (or one file), as the generator takes it. */
const documentsGlob = (path: string) => (existsSync(path) && statSync(path).isDirectory() ? `${resolve(path).replaceAll('\\', '/')}/**/*.graphql` : path);

try {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { documents: { type: 'string', multiple: true }, output: { type: 'string' } },
  });
  const sources = [...positionals, ...(values.documents ?? [])];
  const documents = sources.length > 0 ? sources.map(documentsGlob) : [resolve(REPO_ROOT, EXAMPLE_DOCUMENTS)];
  const output = resolve(values.output ?? resolve(REPO_ROOT, EXAMPLE_MANIFEST));
  const manifest = await generatePersistedQueryManifest({ documents }, undefined);
  if (manifest.operations.length === 0) throw new Error(`no operations found in ${sources.join(', ') || EXAMPLE_DOCUMENTS}`);
  writeSupergraph(output, `${JSON.stringify(manifest, null, 2)}\n`);
  console.log(`wrote ${relative(process.cwd(), output) || output} with ${manifest.operations.length} operations`);
} catch (error) {
  // The generator reports each bad document (parse errors, anonymous or duplicate operation names) before failing.
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
}
