// `npm install` on a fresh clone leaves `git status` clean and warns of nothing: the lock is what this npm writes for
// the committed package.json files, and every dependency's install script is allowed or denied in allowScripts.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '@ordergraph/composition';

const npm = (args: string[], cwd: string) => execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

describe('npm install', () => {
  it('writes back the committed package-lock.json unchanged', () => {
    // The manifests npm reads (the root's and every workspace's) and the lock, alone: nothing installed or run.
    const manifests = execFileSync('git', ['ls-files', 'package.json', '*/package.json', 'package-lock.json'], { cwd: REPO_ROOT, encoding: 'utf8' })
      .split('\n')
      .filter(Boolean);
    const copy = mkdtempSync(join(tmpdir(), 'ordergraph-lock-'));
    try {
      for (const file of manifests) {
        mkdirSync(dirname(join(copy, file)), { recursive: true });
        copyFileSync(join(REPO_ROOT, file), join(copy, file));
      }
      npm(['install', '--package-lock-only', '--ignore-scripts', '--offline', '--no-audit', '--no-fund', '--loglevel=error'], copy);
      expect(readFileSync(join(copy, 'package-lock.json'), 'utf8'), 'run `npm install` and commit package-lock.json').toBe(
        readFileSync(join(REPO_ROOT, 'package-lock.json'), 'utf8'),
      );
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });

  it('finds no install script that allowScripts in package.json leaves unreviewed', () => {
    expect(npm(['install-scripts', 'ls'], REPO_ROOT).trim(), 'review it, then `npm install-scripts approve|deny <pkg>`').toBe(
      'No packages with unreviewed install scripts.',
    );
  });
});
