// A stand-in for the production identity provider, the one auth boundary we do not own and cannot run: real
// generated RS256 and ES256 keys, their public JWKS served over local HTTP, and tokens signed with them.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, exportJWK, exportSPKI, generateKeyPair, type CryptoKey, type JWTPayload } from 'jose';

export type SigningAlgorithm = 'RS256' | 'ES256';

export interface SignOptions {
  alg?: SigningAlgorithm;
  issuer?: string;
  audience?: string;
  /** A jose time span ('1h') or a NumericDate; in the past for an expired token. */
  expiresAt?: string | number;
  /** Sign with a fresh key the JWKS does not list. */
  unknownKey?: boolean;
}

export interface IdentityProvider {
  jwksUrl: string;
  issuer: string;
  audience: string;
  /** The RS256 public key as PEM: what an algorithm-confusion attack uses as an HS256 secret. */
  publicKeyPem: string;
  sign(claims: JWTPayload, options?: SignOptions): Promise<string>;
  close(): Promise<void>;
}

export async function startIdentityProvider(): Promise<IdentityProvider> {
  const keys = {
    RS256: await generateKeyPair('RS256', { extractable: true }),
    ES256: await generateKeyPair('ES256', { extractable: true }),
  };
  const jwks = {
    keys: await Promise.all(
      Object.entries(keys).map(async ([alg, pair]) => ({ ...(await exportJWK(pair.publicKey)), kid: alg, alg, use: 'sig' })),
    ),
  };
  const server = http.createServer((request, response) => {
    if (request.url !== '/.well-known/jwks.json') {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(jwks));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const issuer = `${origin}/`;
  const audience = 'ordergraph';

  return {
    jwksUrl: `${origin}/.well-known/jwks.json`,
    issuer,
    audience,
    publicKeyPem: await exportSPKI(keys.RS256.publicKey),
    async sign(claims, options = {}) {
      const alg = options.alg ?? 'RS256';
      let key: CryptoKey = keys[alg].privateKey;
      if (options.unknownKey) key = (await generateKeyPair(alg)).privateKey;
      return new SignJWT(claims)
        .setProtectedHeader({ alg, kid: alg, typ: 'JWT' })
        .setIssuer(options.issuer ?? issuer)
        .setAudience(options.audience ?? audience)
        .setIssuedAt()
        .setExpirationTime(options.expiresAt ?? '1h')
        .sign(key);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
