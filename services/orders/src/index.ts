// The orders subgraph's process (runSubgraph starts tracing before the server's modules load).
import { runSubgraph } from '@ordergraph/subgraph-kit/run';

await runSubgraph('orders', () => import('./server.js'));
