// Authentication at the edge: a present but invalid bearer token is refused with 401 before any execution; no token
// runs as anonymous. Subgraphs receive the same Authorization header and verify it themselves (they decide access).
import {
  ErrorCode,
  INTERNAL_ERROR_MESSAGE,
  InvalidTokenError,
  viewerFromHeader,
  type Logger,
  type TokenVerifier,
  type Viewer,
} from '@ordergraph/core';
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';
import { errorResponse } from './errors.js';

export interface ViewerContext {
  viewer: Viewer;
}

export function useAuthentication(verify: TokenVerifier, logger: Logger): GatewayPlugin<ViewerContext> {
  return {
    // The server context becomes the GraphQL context, so the viewer is known from parsing on (introspection policy).
    // Not async itself: a request without a token, or with one verified before, passes without a promise.
    onRequest({ request, serverContext, endResponse }) {
      const refuse = (error: unknown) => {
        if (error instanceof InvalidTokenError) {
          endResponse(
            errorResponse(401, ErrorCode.UNAUTHENTICATED, error.message, {
              'www-authenticate': `Bearer error="invalid_token", error_description="${error.message}"`,
            }),
          );
          return;
        }
        // The identity provider's key set could not be fetched, for instance: ours to log, not the caller's to read.
        logger.error({ err: error }, 'authentication failed');
        endResponse(errorResponse(500, ErrorCode.INTERNAL_SERVER_ERROR, INTERNAL_ERROR_MESSAGE));
      };
      const settle = (viewer: Viewer) => {
        (serverContext as Partial<ViewerContext>).viewer = viewer;
      };
      try {
        const viewer = viewerFromHeader(verify, request.headers.get('authorization'));
        if (viewer instanceof Promise) return viewer.then(settle, refuse);
        settle(viewer);
      } catch (error) {
        refuse(error);
      }
      return undefined;
    },
    onContextBuilding({ context, extendContext }) {
      if (context.viewer === undefined) extendContext({ viewer: null });
    },
  };
}
