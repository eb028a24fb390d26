// Small foreign supergraphs for the federation-shapes suite: tiny in-memory subgraphs on free ports over real HTTP,
// each recording the operations it receives, composed with Apollo's composition, served by our gateway and by the bare
// Hive Gateway runtime on the same Rust planner.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApolloServer, type ApolloServerPlugin } from '@apollo/server';
import { ApolloServerPluginInlineTraceDisabled } from '@apollo/server/plugin/disabled';
import { startStandaloneServer } from '@apollo/server/standalone';
import { composeServices } from '@apollo/composition';
import { buildSubgraphSchema, type GraphQLResolverMap } from '@apollo/subgraph';
import { createGatewayRuntime } from '@graphql-hive/gateway-runtime';
import { unifiedGraphHandler } from '@graphql-hive/router-runtime';
import { createLogger } from '@ordergraph/core';
import { createGateway } from '@ordergraph/gateway';
import { loadGatewayConfig } from '@ordergraph/gateway/config';
import { graphql } from '@ordergraph/testkit';
import { parse } from 'graphql';

export interface TinySubgraph {
  name: string;
  typeDefs: string;
  resolvers: GraphQLResolverMap<unknown>;
}

export interface ShapeQuery {
  query: string;
  /** The answer written by hand: what a correct gateway returns. */
  data: unknown;
  /** The error codes expected, when the answer has errors. */
  errorCodes?: string[];
}

export interface Shape {
  name: string;
  subgraphs: TinySubgraph[];
  queries: ShapeQuery[];
}

export interface ServedShape {
  /** Our gateway's /graphql URL (the first replica's). */
  gateway: string;
  /** Every replica's /graphql URL, in front of the same subgraphs. */
  gateways: string[];
  /** The bare runtime's /graphql URL. */
  runtime: string;
  /** The supergraph both serve. */
  sdl: string;
  /** The operations each subgraph has received, by subgraph name; tests empty it between requests. */
  received: Map<string, string[]>;
  stop(): Promise<void>;
}

/** Apollo Server notes each operation as it parses it; the gateways' requests are all that reach these servers. */
const recording = (calls: string[]): ApolloServerPlugin => ({
  async requestDidStart({ request }) {
    if (request.query) calls.push(request.query);
  },
});

/**
 * `gatewayEnv`: settings of our gateway beyond its defaults (the entity cache's suite turns it on); `replicas`: how many
 * of our gateways serve the shape (sharing Redis when gatewayEnv names one).
 */
export async function serveShape(shape: Shape, gatewayEnv: Record<string, string> = {}, replicas = 1): Promise<ServedShape> {
  const stops: (() => Promise<unknown>)[] = [];
  const stop = async () => {
    for (const stopOne of stops.reverse()) await stopOne();
  };
  try {
    const received = new Map<string, string[]>();
    const urls: Record<string, string> = {};
    for (const subgraph of shape.subgraphs) {
      const calls: string[] = [];
      received.set(subgraph.name, calls);
      const server = new ApolloServer({
        schema: buildSubgraphSchema([{ typeDefs: parse(subgraph.typeDefs), resolvers: subgraph.resolvers }]),
        plugins: [recording(calls), ApolloServerPluginInlineTraceDisabled()],
      });
      const { url } = await startStandaloneServer(server, { listen: { port: 0, host: '127.0.0.1' } });
      stops.push(() => server.stop());
      urls[subgraph.name] = url;
    }
    const composed = composeServices(shape.subgraphs.map(({ name, typeDefs }) => ({ name, url: urls[name]!, typeDefs: parse(typeDefs) })));
    if (composed.errors) throw new Error(`${shape.name} does not compose:\n  ${composed.errors.map((error) => error.message).join('\n  ')}`);
    const sdl = composed.supergraphSdl;

    const gateways: string[] = [];
    for (let replica = 0; replica < replicas; replica++) {
      const gateway = createGateway({ config: loadGatewayConfig({ LOG_LEVEL: 'silent', ...gatewayEnv }), supergraph: sdl, logger: createLogger('gateway', 'silent') });
      gateways.push(await gateway.listen(0, '127.0.0.1'));
      stops.push(() => gateway.stop());
    }

    // As bench/servers/hive-runtime.ts sets it up, without the header forwarding these subgraphs do not read.
    const runtime = createGatewayRuntime({ supergraph: sdl, unifiedGraphHandler, logging: false, landingPage: false, graphiql: false });
    const server = http.createServer(runtime);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    stops.push(async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await runtime[Symbol.asyncDispose]();
    });
    const runtimeUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
    return { gateway: gateways[0]!, gateways, runtime: runtimeUrl, sdl, received, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** What the suites compare: the data and the error codes, in order. */
export async function answer(url: string, query: string, bearer?: string) {
  const { body } = await graphql(url, query, bearer ? { token: bearer } : {});
  return { data: body.data, errorCodes: (body.errors ?? []).map((error) => error.extensions?.['code'] as unknown) };
}
