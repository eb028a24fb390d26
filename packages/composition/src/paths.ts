// Where the composed files live and how a subgraph's name appears in environment variables: what the gateway needs of
// this package at run time, apart from the composition library (and its YAML and schema parsers), which it never runs.
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root, where supergraph.yaml and supergraph.graphql live. */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
export const SUPERGRAPH_PATH = resolve(REPO_ROOT, 'supergraph.graphql');
/** The API schema clients generate their types from; `npm run schema:export` writes it. */
export const API_SCHEMA_PATH = resolve(REPO_ROOT, 'schemas/api.graphql');

/** How a subgraph's name appears in environment variable names: `<NAME>_URL`, `<NAME>_PORT`, `SUBGRAPH_<NAME>_URL`. */
export const envNameOf = (subgraph: string): string => subgraph.toUpperCase().replaceAll('-', '_');

/** The gateway's override of a subgraph's routing URL. */
export const subgraphUrlVariable = (subgraph: string): `SUBGRAPH_${string}_URL` => `SUBGRAPH_${envNameOf(subgraph)}_URL`;
