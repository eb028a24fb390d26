// GraphiQL served by the gateway itself, its scripts, styles and editor workers inlined from
// @graphql-yoga/render-graphiql, so the page loads with no other host reachable.
import type { GraphiQLOptions } from 'graphql-yoga';
import { signDevToken, toGlobalId } from '@ordergraph/core';
import { SEED_USER_LOCAL_ID } from '@ordergraph/seed';
import { graphiqlEnabled, type GatewayConfig } from '../config.js';

const DEFAULT_QUERY = `# Products are public; your orders need the token in the Headers tab.
query Products {
  products(limit: 5) {
    id
    name
    price
  }
}
`;

/** The user the development token speaks for: user1@example.com of the seed data. */
export const GRAPHIQL_TOKEN_SUBJECT = toGlobalId('User', SEED_USER_LOCAL_ID);

// In development the Headers editor opens with a fresh token for the seeded USER; subscriptions run over SSE, which
// carries those headers.
/**
 * The runtime's `graphiql` and `renderGraphiQL` options. The development token is minted per page load so a page
 * opened days after start still works; only outside production and only with an HS256 secret.
 */
export function graphiqlOptions(
  config: GatewayConfig,
  jwtSecret: string | undefined,
): { graphiql: false } | { graphiql: () => Promise<GraphiQLOptions>; renderGraphiQL: (options: GraphiQLOptions) => Promise<string> } {
  if (!graphiqlEnabled(config)) return { graphiql: false };
  const mintsToken = config.NODE_ENV !== 'production' && jwtSecret !== undefined;
  return {
    // Loaded on the first page view: the inlined bundle is about 30 MB of heap (its module source and the string it
    // exports), which a gateway that never serves the page should not hold.
    renderGraphiQL: async (options) => (await import('@graphql-yoga/render-graphiql')).renderGraphiQL(options),
    graphiql: async (): Promise<GraphiQLOptions> => {
      const token = mintsToken
        ? await signDevToken(jwtSecret, {
            sub: GRAPHIQL_TOKEN_SUBJECT,
            role: 'USER',
            expiresIn: '12h',
            issuer: config.JWT_ISSUER,
            audience: config.JWT_AUDIENCE,
          })
        : undefined;
      return {
        title: 'ordergraph GraphiQL',
        defaultQuery: DEFAULT_QUERY,
        subscriptionsProtocol: 'SSE',
        // Pre-filled in development only; in production an administrator pastes their own token.
        ...(token ? { headers: JSON.stringify({ Authorization: `Bearer ${token}` }, null, 2), shouldPersistHeaders: false } : {}),
      };
    },
  };
}
