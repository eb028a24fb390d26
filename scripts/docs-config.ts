// npm run docs:config: writes the README's configuration reference, generated from the zod configuration schemas.
//   --check   fail instead of writing when the README differs
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { README, configReference, readReadme, withConfigReference } from './config-reference.js';

const { values } = parseArgs({ options: { check: { type: 'boolean', default: false } } });
const readme = readReadme();
const updated = withConfigReference(readme, await configReference());
if (updated === readme) {
  console.log('README.md configuration reference is up to date');
} else if (values.check) {
  console.error('README.md configuration reference differs from the configuration schemas: run npm run docs:config and commit the result');
  process.exit(1);
} else {
  writeFileSync(README, updated);
  console.log('wrote the configuration reference in README.md');
}
