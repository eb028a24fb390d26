// npm test's runner (scripts/vitest.mjs) leaves colour out of a CI log, which vitest alone fills with escape codes.
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { expect, it } from 'vitest';
import { REPO_ROOT } from '@ordergraph/composition';

const ESCAPE = '\u001b[';
function run(env: Record<string, string>): string {
  const { NO_COLOR: _noColor, FORCE_COLOR: _forceColor, ...inherited } = process.env;
  return execFileSync(process.execPath, [resolve(REPO_ROOT, 'scripts/vitest.mjs'), 'run', 'test/docs-links.test.ts'], {
    cwd: REPO_ROOT,
    env: { ...inherited, ...env },
    encoding: 'utf8',
  });
}

it('writes no colour with CI set and no terminal, and colour when FORCE_COLOR asks', () => {
  const plain = run({ CI: 'true' });
  expect(plain).toMatch(/\d+ passed, 0 failed/);
  expect(plain).not.toContain(ESCAPE);
  expect(run({ CI: 'true', FORCE_COLOR: '1' })).toContain(ESCAPE);
}, 60_000);
