import { SignJWT, exportJWK, generateKeyPair, UnsecuredJWT } from 'jose';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { InvalidTokenError, bearerToken, createTokenVerifier, signDevToken, tokenExpiresAt } from '../src/auth.js';
import { toGlobalId } from '../src/ids.js';

const secret = 'a-test-secret-that-is-at-least-32-characters';
const verify = createTokenVerifier({ jwtSecret: secret });
const sub = toGlobalId('User', 'user-0001');
const key = new TextEncoder().encode(secret);

describe('token verification (HS256)', () => {
  it('accepts a valid token and returns the identity', async () => {
    expect(await verify(await signDevToken(secret, { sub, role: 'ADMIN' }))).toEqual({ userId: sub, role: 'ADMIN' });
  });

  const refused: [string, () => Promise<string>][] = [
    ['expired', () => signDevToken(secret, { sub, role: 'USER', expiresIn: Math.floor(Date.now() / 1000) - 60 })],
    ['signed with another secret', () => signDevToken('another-secret-that-is-at-least-32-chars', { sub, role: 'USER' })],
    ['alg none', async () => new UnsecuredJWT({ role: 'USER' }).setSubject(sub).setExpirationTime('1h').encode()],
    ['without exp', () => new SignJWT({ role: 'USER' }).setProtectedHeader({ alg: 'HS256' }).setSubject(sub).sign(key)],
    ['without a role', () => new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject(sub).setExpirationTime('1h').sign(key)],
    ['with an unknown role', () => new SignJWT({ role: 'ROOT' }).setProtectedHeader({ alg: 'HS256' }).setSubject(sub).setExpirationTime('1h').sign(key)],
    ['whose subject is not a user ID', () => signDevToken(secret, { sub: 'alice', role: 'USER' })],
    ['malformed', async () => 'not.a.jwt'],
    ['HS512 instead of HS256', () => new SignJWT({ role: 'USER' }).setProtectedHeader({ alg: 'HS512' }).setSubject(sub).setExpirationTime('1h').sign(key)],
  ];
  it.each(refused)('refuses a token %s', async (_name, make) => {
    await expect(verify(await make())).rejects.toBeInstanceOf(InvalidTokenError);
  });
});

describe('verified tokens kept for their lifetime', () => {
  afterEach(() => vi.useRealTimers());

  it('accept the same token again until it expires, then refuse it as expired', async () => {
    vi.useFakeTimers({ now: Date.UTC(2026, 10, 1), toFake: ['Date'] });
    const verifier = createTokenVerifier({ jwtSecret: secret });
    const token = await signDevToken(secret, { sub, role: 'USER', expiresIn: '1m' });
    expect(await verifier(token)).toEqual({ userId: sub, role: 'USER' });
    vi.setSystemTime(Date.UTC(2026, 10, 1, 0, 0, 59));
    // Known already: answered at once, without a promise.
    expect(verifier(token)).toEqual({ userId: sub, role: 'USER' });
    vi.setSystemTime(Date.UTC(2026, 10, 1, 0, 1, 0));
    await expect(async () => verifier(token)).rejects.toThrow('Token expired');
  });

  it('never accept a token that differs from a verified one, even by its signature alone', async () => {
    const verifier = createTokenVerifier({ jwtSecret: secret });
    const token = await signDevToken(secret, { sub, role: 'ADMIN' });
    await verifier(token);
    const forged = `${token.slice(0, -2)}${token.endsWith('AA') ? 'AB' : 'AA'}`;
    await expect(verifier(forged)).rejects.toBeInstanceOf(InvalidTokenError);
  });
});

describe('algorithm confusion', () => {
  it('an RS256 verifier refuses an HS256 token signed with the public key as secret', async () => {
    const { publicKey } = await generateKeyPair('RS256');
    const jwk = await exportJWK(publicKey);
    const server = await import('node:http').then(({ createServer }) =>
      createServer((_req, res) => res.end(JSON.stringify({ keys: [{ ...jwk, alg: 'RS256', kid: 'k1' }] }))),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    try {
      const rsVerify = createTokenVerifier({ jwksUrl: `http://127.0.0.1:${port}/jwks` });
      const forged = await new SignJWT({ role: 'ADMIN' })
        .setProtectedHeader({ alg: 'HS256', kid: 'k1' })
        .setSubject(sub)
        .setExpirationTime('1h')
        .sign(new TextEncoder().encode(JSON.stringify(jwk)));
      await expect(rsVerify(forged)).rejects.toBeInstanceOf(InvalidTokenError);
    } finally {
      server.close();
    }
  });
});

describe('an identity provider that fails', () => {
  // Its failure is not the token's: the caller must not be told 401, so the error is not an InvalidTokenError.
  it.each([
    ['answers 500', (res: import('node:http').ServerResponse) => res.writeHead(500).end()],
    ['answers something other than JSON', (res: import('node:http').ServerResponse) => res.end('<html>')],
    ['answers JSON that is not a key set', (res: import('node:http').ServerResponse) => res.end('{"keys":"none"}')],
    ['cannot be reached', null],
  ] as const)('%s', async (_kind, answer) => {
    const { createServer } = await import('node:http');
    const server = createServer((_req, res) => answer?.(res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    if (answer === null) await new Promise((resolve) => server.close(resolve));
    try {
      const rsVerify = createTokenVerifier({ jwksUrl: `http://127.0.0.1:${port}/jwks` });
      const { privateKey } = await generateKeyPair('RS256');
      const jwt = await new SignJWT({ role: 'USER' }).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).setSubject(sub).setExpirationTime('1h').sign(privateKey);
      const failure = await Promise.resolve(rsVerify(jwt)).then(
        () => null,
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(Error);
      expect(failure).not.toBeInstanceOf(InvalidTokenError);
    } finally {
      server.close();
    }
  });
});

describe('bearer header', () => {
  it('reads the token, treats absence as anonymous and refuses other schemes', () => {
    expect(bearerToken('Bearer abc.def.ghi')).toBe('abc.def.ghi');
    expect(bearerToken(undefined)).toBeUndefined();
    expect(() => bearerToken('Basic dXNlcjpwYXNz')).toThrow(InvalidTokenError);
    expect(() => bearerToken('Bearer')).toThrow(InvalidTokenError);
  });
});

describe('token expiry', () => {
  it('is read from the header’s token in ms since the epoch, undefined without a token', async () => {
    const token = await new SignJWT({ role: 'USER' }).setProtectedHeader({ alg: 'HS256' }).setSubject(sub).setExpirationTime(2_000_000_000).sign(key);
    expect(tokenExpiresAt(`Bearer ${token}`)).toBe(2_000_000_000_000);
    expect(tokenExpiresAt(undefined)).toBeUndefined();
  });
});
