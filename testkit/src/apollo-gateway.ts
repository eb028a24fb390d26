// Apollo's own Federation 2 gateway (@apollo/gateway on @apollo/server) serving a supergraph SDL, as the portability
// reference: the same supergraph must answer the same way behind it as behind our Hive Gateway.
import { ApolloGateway, RemoteGraphQLDataSource } from '@apollo/gateway';
import { ApolloServer } from '@apollo/server';
import { startStandaloneServer } from '@apollo/server/standalone';
import { SIGNATURE_EXTENSION, signOperation } from '@ordergraph/subgraph-kit';

interface Context {
  authorization?: string;
}

const silent = { debug() {}, info() {}, warn() {}, error() {} };

/**
 * @apollo/gateway refuses a supergraph that links @authenticated or @requiresScopes `for: SECURITY` (it enforces
 * neither; Apollo Router does). It reads ours with those two links as plain features, so the subgraphs' own checks
 * answer, as they do behind any gateway that does not enforce the directives.
 */
const withoutUnsupportedSecurityFeatures = (sdl: string): string =>
  sdl.replace(/(@link\(url: "https:\/\/specs\.apollo\.dev\/(?:authenticated|requiresScopes)\/v[\d.]+"), for: SECURITY\)/g, '$1)');

/** With `signingSecret`, every subgraph request is signed as our gateway signs it, for subgraphs that require it. */
export async function startApolloGateway(supergraphSdl: string, port = 0, signingSecret?: string): Promise<{ url: string; stop(): Promise<void> }> {
  const gateway = new ApolloGateway({
    supergraphSdl: withoutUnsupportedSecurityFeatures(supergraphSdl),
    logger: silent,
    // The caller's bearer token goes to every subgraph, which verifies it itself (as behind our gateway).
    buildService: ({ url }) =>
      new RemoteGraphQLDataSource<Context>({
        url,
        willSendRequest({ request, context }) {
          if (context.authorization) request.http?.headers.set('authorization', context.authorization);
          if (signingSecret && request.query) {
            const signature = signOperation(signingSecret, { query: request.query, variables: request.variables });
            request.extensions = { ...request.extensions, [SIGNATURE_EXTENSION]: signature };
          }
        },
      }),
  });
  const server = new ApolloServer<Context>({ gateway, logger: silent, includeStacktraceInErrorResponses: false });
  const { url } = await startStandaloneServer(server, {
    listen: { port, host: '127.0.0.1' },
    context: async ({ req }) => (req.headers.authorization ? { authorization: req.headers.authorization } : {}),
  });
  return { url, stop: () => server.stop() };
}
