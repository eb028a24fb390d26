// npm run schema:check: each subgraph's schema against the deployed baseline, every change classified by the spec's
// Versioning table; exits 1 on a breaking change or a composition failure, 2 when the check cannot run.
import { schemaCheckCommand } from '@ordergraph/governance';

//   --baseline <dir>             baseline SDL files, one per subgraph (default: the committed schemas/baseline)
//   --subgraph-url <name>=<url>  take that subgraph's baseline from its running deployment (`_service { sdl }`)
//   --gateway <url>              instead, compare the composed API schema with a running gateway's (introspection)
//   --token <jwt>                bearer token for --gateway where introspection is for administrators only
//   --config <supergraph.yaml>   another supergraph config
process.exitCode = await schemaCheckCommand(process.argv.slice(2), console);
