// The users subgraph's process (runSubgraph starts tracing before the server's modules load).
import { runSubgraph } from '@ordergraph/subgraph-kit/run';

await runSubgraph('users', () => import('./server.js'));
