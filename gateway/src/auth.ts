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

export function useAuthentication(verify: TokenVerifier): GatewayPlugin<ViewerContext> {
  return {
    // The server context becomes the GraphQL context, so the viewer is known from parsing on (introspection policy).
    async onRequest({ request, serverContext, endResponse }) {
      try {
        (serverContext as Partial<ViewerContext>).viewer = await viewerFromHeader(verify, request.headers.get('authorization'));
      } catch (error) {
        if (!(error instanceof InvalidTokenError)) throw error;
        endResponse(unauthorized(error.message));
      }
    },
    onContextBuilding({ context, extendContext }) {
      if (context.viewer === undefined) extendContext({ viewer: null });
    },
  };
}
