// npm run deploy:generate: writes the subgraph lists of docker-compose.yml and the Helm values from supergraph.yaml.
//   --check   fail instead of writing when a file differs
import { readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { parseArgs } from 'node:util';
import { REPO_ROOT } from '@ordergraph/composition';
import { deploymentFiles } from './deployment-files.js';

const { values } = parseArgs({ options: { check: { type: 'boolean', default: false } } });
let stale = false;
for (const { path, text } of await deploymentFiles()) {
  const name = relative(REPO_ROOT, path);
  if (readFileSync(path, 'utf8') === text) {
    console.log(`${name} is up to date`);
  } else if (values.check) {
    console.error(`${name} differs from supergraph.yaml: run npm run deploy:generate and commit the result`);
    stale = true;
  } else {
    writeFileSync(path, text);
    console.log(`wrote ${name}`);
  }
}
if (stale) process.exit(1);
