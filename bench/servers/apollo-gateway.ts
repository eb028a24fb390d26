// @apollo/gateway on Apollo Server, as the portability suite runs it, in a process of its own.
import { readFileSync } from 'node:fs';
import { startApolloGateway } from '../../e2e/apollo-gateway.js';

const [supergraphPath, port] = process.argv.slice(2);
await startApolloGateway(readFileSync(supergraphPath!, 'utf8'), Number(port));
process.send?.('listening');
