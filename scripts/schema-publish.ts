// npm run schema:publish: at release, the current subgraph schemas become the deployed baseline (schemas/baseline) that
// the next check compares against, so fields deprecated in this release may go in the next one.
import { schemaPublishCommand } from '@ordergraph/governance';

// Refuses while the check finds a breaking change, unless --allow-breaking (a deliberate, announced break); never
// publishes subgraphs that do not compose.
//   --baseline <dir>  --config <supergraph.yaml>  --allow-breaking
process.exitCode = await schemaPublishCommand(process.argv.slice(2), console);
