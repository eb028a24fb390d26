// npm run compose: supergraph.yaml -> supergraph.graphql with a composition library (no rover binary needed); exits 1
// with the composition errors when the subgraphs do not compose.
import { composeCommand } from '@ordergraph/governance';

//   --check                     fail instead of writing when the committed file is stale (CI)
//   --config <supergraph.yaml>  --output <supergraph.graphql>   other paths than the repository's own
process.exitCode = composeCommand(process.argv.slice(2), console);
