// What every gateway response tells browsers and caches: CORS for the CORS_ORIGINS only (never with credentials), the
// same security headers everywhere, GraphiQL's page included, and a validator only on responses that may be stored.
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';
import type { ServerResponse } from 'node:http';

/**
 * GraphiQL (inlined by @graphql-yoga/render-graphiql) runs inline scripts and styles, builds its editor workers from
 * blob: URLs and speaks to the gateway only; every other response is JSON or text, which this policy leaves inert.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self' 'unsafe-inline'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "worker-src 'self' blob:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
};

/** In production only: over plain HTTP in development it would pin browsers to HTTPS on localhost. */
const STRICT_TRANSPORT_SECURITY = 'max-age=31536000; includeSubDomains';

/** Sets the security headers on a Node response before anything writes it, so every response carries them. */
export function securityHeaders(production: boolean) {
  const headers = Object.entries(SECURITY_HEADERS);
  if (production) headers.push(['strict-transport-security', STRICT_TRANSPORT_SECURITY]);
  return (response: ServerResponse) => {
    for (const [name, value] of headers) response.setHeader(name, value);
  };
}

/** Headers a cross-origin client may read. */
const EXPOSED_HEADERS = ['x-request-id', 'retry-after'];

/**
 * The runtime's `cors` option: the allowed origin echoed (only when it is in the list) or `*`, never with
 * Access-Control-Allow-Credentials; no CORS headers at all for any other origin.
 */
export function corsPolicy(origins: readonly string[]) {
  const any = origins.includes('*');
  const allowed = new Set(origins);
  return (request: Request) => {
    const origin = request.headers.get('origin');
    if (origin === null || (!any && !allowed.has(origin))) return false as const;
    return { origin: any ? '*' : origin, credentials: false, methods: ['GET', 'POST'], exposedHeaders: EXPOSED_HEADERS, maxAge: 600 };
  };
}

/**
 * A response that answers for one origin must not be reused for another (the runtime does not say so for a single
 * origin); a response that may not be stored needs no validator, so no ETag or Last-Modified goes with `no-store`.
 */
export function useResponseHeaders(): GatewayPlugin {
  return {
    onResponse({ response }) {
      const allowOrigin = response.headers.get('access-control-allow-origin');
      if (allowOrigin !== null && allowOrigin !== '*' && !/\borigin\b/i.test(response.headers.get('vary') ?? '')) {
        response.headers.append('vary', 'Origin');
      }
      if (response.headers.get('cache-control')?.includes('no-store')) {
        response.headers.delete('etag');
        response.headers.delete('last-modified');
      }
    },
  };
}
