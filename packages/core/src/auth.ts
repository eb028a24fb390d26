// Bearer JWTs: HS256 with a shared secret in development, RS256/ES256 against a JWKS in production.
import { SignJWT, createRemoteJWKSet, decodeJwt, jwtVerify, errors as joseErrors, type JWTVerifyGetKey } from 'jose';
import { LRUCache } from 'lru-cache';
import { fromGlobalId } from './ids.js';

export const ROLES = ['USER', 'ADMIN'] as const;
export type Role = (typeof ROLES)[number];

/** Who is asking. `null` is an anonymous caller. */
export interface Identity {
  /** The user's global ID (the token's `sub`). */
  userId: string;
  role: Role;
}
export type Viewer = Identity | null;

/** Who sent a request: the verified viewer, and the credential to forward when the subgraph calls another. */
export interface RequestIdentity {
  viewer: Viewer;
  authorization: string | undefined;
}

export interface AuthConfig {
  jwtSecret?: string | undefined;
  jwksUrl?: string | undefined;
  issuer?: string | undefined;
  audience?: string | undefined;
}

/** Why a presented token was refused; the message is safe to show to the caller. */
export class InvalidTokenError extends Error {
  override readonly name = 'InvalidTokenError';
}

/** A token verified before answers at once (no promise); throws, or rejects, InvalidTokenError for a bad one. */
export type TokenVerifier = (token: string) => Identity | Promise<Identity>;

/** Verified tokens a process keeps; each entry is a few hundred bytes. */
const VERIFIED_TOKENS = 10_000;

/**
 * The JWKS could not be fetched or read: the identity provider failed, not the token, so this is no reason to refuse
 * the caller with 401 (the failure stays an internal one). jose throws its bare JOSEError only for a failed fetch.
 */
const isKeySetFailure = (error: unknown): boolean =>
  error instanceof joseErrors.JWKSTimeout ||
  error instanceof joseErrors.JWKSInvalid ||
  (error instanceof joseErrors.JOSEError && error.code === joseErrors.JOSEError.code);

export function createTokenVerifier(config: AuthConfig): TokenVerifier {
  let key: Uint8Array | JWTVerifyGetKey;
  let algorithms: string[];
  if (config.jwksUrl) {
    key = createRemoteJWKSet(new URL(config.jwksUrl));
    algorithms = ['RS256', 'ES256'];
  } else if (config.jwtSecret) {
    key = new TextEncoder().encode(config.jwtSecret);
    algorithms = ['HS256'];
  } else {
    throw new Error('JWT_SECRET or JWT_JWKS_URL must be set');
  }
  // Verifying a signature is the costliest step of a request's authentication; a token verified once is kept (by its
  // full text, so nothing but that very token can hit) until it expires, and checked for expiry on every use.
  const verified = new LRUCache<string, { viewer: Identity; expiresAt: number }>({ max: VERIFIED_TOKENS });
  const verifyNew = async (token: string): Promise<Identity> => {
    try {
      // Pinning `algorithms` rejects `alg: none` and algorithm confusion (an HS256 token signed with a public key).
      const { payload } = await jwtVerify(token, key as Uint8Array, {
        algorithms,
        requiredClaims: ['exp', 'sub'],
        ...(config.issuer ? { issuer: config.issuer } : {}),
        ...(config.audience ? { audience: config.audience } : {}),
      });
      const role = payload['role'];
      if (role !== 'USER' && role !== 'ADMIN') throw new InvalidTokenError('Token has no valid role claim');
      if (!payload.sub || fromGlobalId(payload.sub)?.type !== 'User') {
        throw new InvalidTokenError('Token subject is not a user ID');
      }
      const viewer = { userId: payload.sub, role } as const;
      verified.set(token, { viewer, expiresAt: payload.exp! * 1000 });
      return viewer;
    } catch (error) {
      if (error instanceof InvalidTokenError || isKeySetFailure(error)) throw error;
      if (error instanceof joseErrors.JWTExpired) throw new InvalidTokenError('Token expired');
      if (error instanceof joseErrors.JOSEError) throw new InvalidTokenError('Invalid token');
      throw error; // not the token's fault (the key set fetch failed, for instance): an internal failure
    }
  };
  return (token) => {
    const known = verified.get(token);
    if (!known) return verifyNew(token);
    if (known.expiresAt > Date.now()) return known.viewer;
    verified.delete(token);
    throw new InvalidTokenError('Token expired');
  };
}

/** The token of an `Authorization: Bearer <token>` header; undefined when absent, throws when malformed. */
export function bearerToken(header: string | null | undefined): string | undefined {
  if (header === null || header === undefined || header === '') return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match?.[1]) throw new InvalidTokenError('Authorization header must be "Bearer <token>"');
  return match[1];
}

/** Resolves the viewer of a request from its Authorization header: at once when there is none or it was verified before. */
export function viewerFromHeader(verify: TokenVerifier, header: string | null | undefined): Viewer | Promise<Viewer> {
  const token = bearerToken(header);
  return token === undefined ? null : verify(token);
}

/** When the token of an Authorization header expires (ms since the epoch): read from a token verified already. */
export function tokenExpiresAt(header: string | null | undefined): number | undefined {
  const token = bearerToken(header);
  const exp = token === undefined ? undefined : decodeJwt(token).exp;
  return exp === undefined ? undefined : exp * 1000;
}

/** Mints an HS256 development token. */
export async function signDevToken(
  secret: string,
  claims: { sub: string; role: Role; expiresIn?: string | number; issuer?: string; audience?: string },
): Promise<string> {
  let jwt = new SignJWT({ role: claims.role })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(claims.sub)
    .setIssuedAt()
    .setExpirationTime(claims.expiresIn ?? '1h');
  if (claims.issuer) jwt = jwt.setIssuer(claims.issuer);
  if (claims.audience) jwt = jwt.setAudience(claims.audience);
  return jwt.sign(new TextEncoder().encode(secret));
}
