// Apollo's own Federation 2 gateway (@apollo/gateway on @apollo/server) serving a supergraph SDL, as the portability
// reference: the same supergraph must answer the same way behind it as behind our Hive Gateway.
import { ApolloGateway, RemoteGraphQLDataSource } from '@apollo/gateway';
import { ApolloServer } from '@apollo/server';
import { startStandaloneServer } from '@apollo/server/standalone';

interface Context {
  authorization?: string;
}

const silent = { debug() {}, info() {}, warn() {}, error() {} };

export async function startApolloGateway(supergraphSdl: string, port = 0): Promise<{ url: string; stop(): Promise<void> }> {
  const gateway = new ApolloGateway({
    supergraphSdl,
    logger: silent,
    // The caller's bearer token goes to every subgraph, which verifies it itself (as behind our gateway).
    buildService: ({ url }) =>
      new RemoteGraphQLDataSource<Context>({
        url,
        willSendRequest({ request, context }) {
          if (context.authorization) request.http?.headers.set('authorization', context.authorization);
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
