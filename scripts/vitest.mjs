// npm test's runner: vitest, without colour where nobody reads colour. vitest colours whenever CI is set (it counts CI
// as colour support), so a CI log, no terminal, would be full of escape codes; NO_COLOR and FORCE_COLOR still decide.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

if (process.env['CI'] && !process.env['FORCE_COLOR'] && !process.stdout.isTTY) process.env['NO_COLOR'] = '1';
const vitest = dirname(createRequire(import.meta.url).resolve('vitest/package.json'));
await import(pathToFileURL(join(vitest, 'vitest.mjs')).href);
