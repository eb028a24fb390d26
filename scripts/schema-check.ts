// npm run schema:check: each subgraph's schema against the deployed baseline, every change classified by the spec's
// Versioning table; exits 1 on a breaking change, a broken known operation or a composition failure, 2 when it cannot run.
//   --baseline <dir>             baseline SDL files, one per subgraph (default: the committed schemas/baseline)
//   --subgraph-url <name>=<url>  take that subgraph's baseline from its running deployment (`_service { sdl }`)
//   --gateway <url>              instead, compare the composed API schema with a running gateway's (introspection)
//   --token <jwt>                bearer token for --gateway where introspection is for administrators only
//   --config <supergraph.yaml>   another supergraph config
//   --operations <path>          the operations clients send: a trusted-documents manifest (.json) or a folder of
//                                .graphql documents (repeatable); the report names each one the change breaks, and why,
//                                and for each breaking change the clients whose operations use it (a manifest entry's
//                                `clientName`)
//   --operations-by-client <dir> the same from a folder per client (`<dir>/web/`, `<dir>/ios/`, or `<dir>/web.json`),
//                                each named for its client (repeatable)
//   --allow-unused-breaking      with --operations: a breaking change no known operation uses passes
import { schemaCheckCommand } from '@ordergraph/governance';

process.exitCode = await schemaCheckCommand(process.argv.slice(2), console);
