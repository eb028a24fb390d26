// npm run docs:config: writes the configuration reference of docs/configuration.md, generated from the zod
// configuration schemas.
//   --check   fail instead of writing when the page differs
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { CONFIGURATION_DOC, configReference, readConfigurationDoc, withConfigReference } from './config-reference.js';

const { values } = parseArgs({ options: { check: { type: 'boolean', default: false } } });
const page = readConfigurationDoc();
const updated = withConfigReference(page, await configReference());
if (updated === page) {
  console.log('docs/configuration.md configuration reference is up to date');
} else if (values.check) {
  console.error('docs/configuration.md configuration reference differs from the configuration schemas: run npm run docs:config and commit the result');
  process.exit(1);
} else {
  writeFileSync(CONFIGURATION_DOC, updated);
  console.log('wrote the configuration reference in docs/configuration.md');
}
