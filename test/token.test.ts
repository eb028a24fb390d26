// npm run token: development tokens the gateway accepts, for a role, a subject and a lifetime.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { decodeJwt } from 'jose';
import { describe, expect, it } from 'vitest';
import { DEV_JWT_SECRET, createTokenVerifier, toGlobalId } from '@ordergraph/core';
import { REPO_ROOT } from '@ordergraph/composition';
import { tokenCommand } from '../scripts/token-command.js';

const SECRET = 'token-script-test-secret-of-32-characters';

/** Runs the script as `npm run token` does, in its own process, with only the given JWT settings in its environment. */
async function mintInItsOwnProcess(args: string[], env: Record<string, string>, cwd = REPO_ROOT) {
  const { JWT_SECRET: _s, JWT_ISSUER: _i, JWT_AUDIENCE: _a, ...rest } = process.env;
  const bin = resolve(REPO_ROOT, 'node_modules/.bin/tsx');
  const { stdout, stderr } = await promisify(execFile)(bin, ['--conditions=source', resolve(REPO_ROOT, 'scripts/token.ts'), ...args], { cwd, env: { ...rest, ...env } });
  expect(stderr).toBe('');
  return stdout.trim();
}

/** What the script runs, in this process, with no JWT settings in its environment. */
async function mint(args: string[]) {
  const outcome = { code: 0, stdout: '', stderr: '' };
  outcome.code = await tokenCommand(args, {}, { log: (text: string) => (outcome.stdout += text), error: (text: string) => (outcome.stderr += text) });
  return outcome;
}

describe('npm run token', () => {
  it('mints a USER token for the first seeded user by default, for 12 hours, with the development secret', async () => {
    const { code, stdout: jwt } = await mint([]);
    expect(code).toBe(0);
    expect(await createTokenVerifier({ jwtSecret: DEV_JWT_SECRET })(jwt)).toEqual({ userId: toGlobalId('User', 'user-0001'), role: 'USER' });
    const { exp, iat } = decodeJwt(jwt);
    expect(exp! - iat!).toBe(12 * 3600);
  });

  it('takes the role, the subject and the lifetime, and the issuer, audience and secret of the environment', async () => {
    const sub = toGlobalId('User', 'user-0042');
    const jwt = await mintInItsOwnProcess(['--role', 'admin', '--sub', sub, '--expires', '5m'], { JWT_SECRET: SECRET, JWT_ISSUER: 'https://issuer.test/', JWT_AUDIENCE: 'ordergraph' });
    const verify = createTokenVerifier({ jwtSecret: SECRET, issuer: 'https://issuer.test/', audience: 'ordergraph' });
    expect(await verify(jwt)).toEqual({ userId: sub, role: 'ADMIN' });
    const { exp, iat } = decodeJwt(jwt);
    expect(exp! - iat!).toBe(300);
  }, 60_000);

  it("reads .env as npm start does, the environment winning, so its tokens are the ones the stack accepts", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ordergraph-token-'));
    writeFileSync(join(dir, '.env'), `JWT_SECRET=${SECRET}\nJWT_AUDIENCE=from-dotenv\n`);
    const jwt = await mintInItsOwnProcess([], { JWT_AUDIENCE: 'from-environment' }, dir);
    expect(await createTokenVerifier({ jwtSecret: SECRET, audience: 'from-environment' })(jwt)).toMatchObject({ role: 'USER' });
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it('refuses an unknown role', async () => {
    expect(await mint(['--role', 'ROOT'])).toEqual({ code: 2, stdout: '', stderr: '--role must be one of USER, ADMIN' });
  });
});
