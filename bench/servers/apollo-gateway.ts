// @apollo/gateway on Apollo Server, as the portability suite runs it, in a process of its own.
import { readFileSync } from 'node:fs';
import { startApolloGateway } from '@ordergraph/testkit/e2e';

const [supergraphPath, port] = process.argv.slice(2);
// Production subgraphs serve only signed requests: it signs them as our gateway and the Hive runtime do.
await startApolloGateway(readFileSync(supergraphPath!, 'utf8'), Number(port), process.env['SUBGRAPH_SIGNING_SECRET']);
process.send?.('listening');
