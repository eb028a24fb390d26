// npm run compose: supergraph.yaml -> supergraph.graphql, with a composition library (no rover binary needed).
// Exits 1 with the composition errors when the subgraphs do not compose.
//   --check                     fail instead of writing when the committed file is stale (CI)
//   --config <supergraph.yaml>  --output <supergraph.graphql>   other paths than the repository's own
import { composeCommand } from '@ordergraph/governance';

process.exitCode = composeCommand(process.argv.slice(2), console);
