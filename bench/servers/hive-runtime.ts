// The bare Hive Gateway runtime, as its documentation sets it up: the supergraph, the caller's Authorization passed to
// the subgraphs (they verify it), its upstream signature (production subgraphs require it), nothing else. With
// `--rust` it executes on the Rust query planner.
import http from 'node:http';
import { readFileSync } from 'node:fs';
import { createGatewayRuntime } from '@graphql-hive/gateway-runtime';
import { unifiedGraphHandler } from '@graphql-hive/router-runtime';

const [supergraphPath, port, planner] = process.argv.slice(2);
const runtime = createGatewayRuntime({
  supergraph: readFileSync(supergraphPath!, 'utf8'),
  ...(planner === '--rust' ? { unifiedGraphHandler } : {}),
  logging: false,
  landingPage: false,
  graphiql: false,
  // Production subgraphs serve only requests signed with the runtime's own upstream signature.
  hmacSignature: { secret: process.env['SUBGRAPH_SIGNING_SECRET']! },
  propagateHeaders: {
    fromClientToSubgraphs: ({ request }) => {
      const authorization = request.headers.get('authorization');
      return authorization ? { authorization } : {};
    },
  },
});
const server = http.createServer(runtime).listen(Number(port), '127.0.0.1', () => process.send?.('listening'));
// The runtime disposes itself on SIGTERM but leaves the server open; the benchmark waits for the process to exit.
process.once('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
