// npm run schema:publish: at release, makes the current subgraph schemas the deployed baseline (schemas/baseline), so
// the next check compares against them and fields deprecated in this release may be removed in the next one.
// Refuses while the check finds a breaking change, unless --allow-breaking (a deliberate, announced break); never
// publishes subgraphs that do not compose.
//   --baseline <dir>  --config <supergraph.yaml>  --allow-breaking
import { schemaPublishCommand } from '@ordergraph/governance';

process.exitCode = await schemaPublishCommand(process.argv.slice(2), console);
