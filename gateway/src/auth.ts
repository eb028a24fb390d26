// Authentication at the edge: a present but invalid bearer token is refused with 401 before any execution; no token
// runs as anonymous. Subgraphs receive the same Authorization header and verify it themselves (they decide access).
import { InvalidTokenError, ErrorCode, viewerFromHeader, type TokenVerifier, type Viewer } from '@ordergraph/common';
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';

export interface ViewerContext {
  viewer: Viewer;
}

function unauthorized(message: string): Response {
  return new Response(JSON.stringify({ errors: [{ message, extensions: { code: ErrorCode.UNAUTHENTICATED } }] }), {
    status: 401,
    headers: {
      'content-type': 'application/json; charset=utf-8',
      'www-authenticate': `Bearer error="invalid_token", error_description="${message}"`,
    },
  });
}

const viewers = new WeakMap<Request, Viewer>();

/** The verified viewer of a request, for edge plugins that run before the GraphQL context exists. */
export const viewerOf = (request: Request): Viewer => viewers.get(request) ?? null;

export function useAuthentication(verify: TokenVerifier): GatewayPlugin<ViewerContext> {
  return {
    async onRequest({ request, endResponse }) {
      try {
        viewers.set(request, await viewerFromHeader(verify, request.headers.get('authorization')));
      } catch (error) {
        if (!(error instanceof InvalidTokenError)) throw error;
        endResponse(unauthorized(error.message));
      }
    },
    onContextBuilding({ context, extendContext }) {
      extendContext({ viewer: viewers.get(context.request) ?? null });
    },
  };
}
