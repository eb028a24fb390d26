// The gateways we compare ours with run on their packages as users install them, not on ours: `npm ci` applies
// patches/ to node_modules, and a bare runtime started from the repository would execute our patched router-runtime,
// fusion-runtime, executor-http and promise-helpers (the patches exist to make that code cheaper). So the benchmark
// builds a second node_modules beside its servers: hard links to ours (a second or two, no space), except each patched
// package, which is copied for real and has its patch taken back out.
import { execFileSync } from 'node:child_process';
import { copyFileSync, cpSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { ROOT } from './processes.js';

const PATCHES = resolve(ROOT, 'patches');
const TREE = resolve(ROOT, 'bench/out/unpatched');

/** The package directories a patch-package patch touches (`node_modules/@scope/name`), from its `diff --git` lines. */
export function patchedPackages(patch: string): string[] {
  const roots = new Set<string>();
  for (const [, root] of patch.matchAll(/^diff --git a\/(node_modules\/(?:@[^/\n]+\/)?[^/\n]+)\//gm)) roots.add(root!);
  return [...roots];
}

/**
 * `git apply <flags> <patch>` in `dir`, looking for no repository above it (git stops at its parent), so that it
 * patches files as plain `patch` would. Throws when the patch does not apply.
 */
export function gitApply(patch: string, dir: string, ...flags: string[]): void {
  execFileSync('git', ['apply', ...flags, patch], { cwd: dir, env: { ...process.env, GIT_CEILING_DIRECTORIES: dirname(dir) }, stdio: ['ignore', 'ignore', 'pipe'] });
}

/**
 * Writes bench/out/unpatched (git-ignored): node_modules as published and a copy of each server of bench/servers, so
 * that Node resolves the servers' packages there. Returns the path of a server in it. Fails if a patch does not come
 * back out cleanly: the tree would then not be what users install.
 */
export function unpatchedServers(tree = TREE): (server: string) => string {
  rmSync(tree, { recursive: true, force: true });
  mkdirSync(tree, { recursive: true });
  execFileSync('cp', ['-al', resolve(ROOT, 'node_modules'), resolve(tree, 'node_modules')]);
  const patches = readdirSync(PATCHES).filter((file) => file.endsWith('.patch'));
  for (const file of patches) {
    const patch = resolve(PATCHES, file);
    // A real copy first: reversing the patch in place would write through the hard links into our node_modules.
    for (const root of patchedPackages(readFileSync(patch, 'utf8'))) {
      rmSync(resolve(tree, root), { recursive: true, force: true });
      cpSync(resolve(ROOT, root), resolve(tree, root), { recursive: true, verbatimSymlinks: true });
    }
    gitApply(patch, tree, '--reverse');
  }
  const servers = resolve(ROOT, 'bench/servers');
  for (const server of readdirSync(servers)) copyFileSync(resolve(servers, server), resolve(tree, server));
  process.stdout.write(`the other gateways run on node_modules without ${patches.length} patches (${tree})\n`);
  return (server) => resolve(tree, server);
}
