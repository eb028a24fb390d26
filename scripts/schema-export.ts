// npm run schema:export: the API schema clients see (no federation machinery, @deprecated kept), written to
// schemas/api.graphql for client code generators.
import { relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { API_SCHEMA_PATH, CompositionError, compose, readSupergraphConfig, writeSupergraph } from '@ordergraph/composition';

//   --config <supergraph.yaml>  --output <api.graphql>   other paths than the repository's own
const { values } = parseArgs({ options: { config: { type: 'string' }, output: { type: 'string' } } });
const output = values.output ? resolve(values.output) : API_SCHEMA_PATH;
try {
  writeSupergraph(output, compose(readSupergraphConfig(values.config && resolve(values.config))).publicSdl);
  console.log(`wrote ${relative(process.cwd(), output)}`);
} catch (error) {
  if (!(error instanceof CompositionError)) throw error;
  console.error(error.message);
  process.exit(1);
}
