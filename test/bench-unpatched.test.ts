// The benchmark's other gateways run on the packages as published: bench/unpatched.ts takes our patches back out of a
// hard-linked copy of node_modules, and must leave our own node_modules patched.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '@ordergraph/composition';
import { gitApply, patchedPackages, unpatchedServers } from '../bench/unpatched.js';

const PATCHES = resolve(REPO_ROOT, 'patches');
const patches = readdirSync(PATCHES).filter((file) => file.endsWith('.patch'));
// Under bench/out (git-ignored) so that the hard links stay on one file system.
mkdirSync(resolve(REPO_ROOT, 'bench/out'), { recursive: true });
const scratch = mkdtempSync(resolve(REPO_ROOT, 'bench/out/unpatched-test-'));
const tree = resolve(scratch, 'tree');
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Whether a patch would apply in a directory as it stands. */
const applies = (patch: string, dir: string, reverse: boolean): boolean => {
  try {
    gitApply(resolve(PATCHES, patch), dir, '--check', ...(reverse ? ['--reverse'] : []));
    return true;
  } catch {
    return false;
  }
};

describe('the benchmark on unpatched packages', () => {
  it('reads the one package each patch changes from the patch itself', () => {
    expect(patches.length).toBeGreaterThan(0);
    for (const file of patches) {
      // patch-package names a patch after its package: @scope+name+version.patch.
      const named = file.replace(/\+[^+]+\.patch$/, '').replace('+', '/');
      expect(patchedPackages(readFileSync(resolve(PATCHES, file), 'utf8'))).toEqual([`node_modules/${named}`]);
    }
  });

  it('finds every package of a patch it did not write: unscoped, scoped and nested, each once', () => {
    // patch-package's shapes beyond ours: several files of one package, a package nested in another's node_modules
    // (its root is the outer package, whose copy holds it), and a `diff --git` line quoted in a hunk's text.
    const patch = [
      'diff --git a/node_modules/left-pad/index.js b/node_modules/left-pad/index.js',
      '--- a/node_modules/left-pad/index.js',
      '+++ b/node_modules/left-pad/index.js',
      '@@ -1 +1 @@',
      '-module.exports = 1;',
      '+module.exports = 2; // diff --git a/node_modules/not-a-root/x.js',
      'diff --git a/node_modules/left-pad/lib/util.js b/node_modules/left-pad/lib/util.js',
      'diff --git a/node_modules/@scope/pkg/dist/index.cjs b/node_modules/@scope/pkg/dist/index.cjs',
      'diff --git a/node_modules/outer/node_modules/inner/index.js b/node_modules/outer/node_modules/inner/index.js',
    ].join('\n');
    expect(patchedPackages(patch)).toEqual(['node_modules/left-pad', 'node_modules/@scope/pkg', 'node_modules/outer']);
  });

  it('takes every patch out of its copy and leaves our node_modules patched', () => {
    const server = unpatchedServers(tree);
    for (const file of patches) {
      expect(applies(file, tree, false), `${file} applies again to the copy: it was taken out`).toBe(true);
      expect(applies(file, tree, true), `${file} is not in the copy`).toBe(false);
      expect(applies(file, REPO_ROOT, true), `${file} is still in our node_modules`).toBe(true);
    }
    // A server copied into the tree resolves its packages there, not in our node_modules.
    const resolved = execFileSync(process.execPath, ['--input-type=module', '-e', "console.log(import.meta.resolve('@graphql-hive/router-runtime'))"], { cwd: dirname(server('hive-runtime.ts')), encoding: 'utf8' });
    expect(resolved).toContain(`${tree}/node_modules/@graphql-hive/router-runtime/`);
  }, 60_000);
});
