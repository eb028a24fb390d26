// supergraph.yaml (rover's format) -> a composed Federation 2 supergraph, with a composition library instead of rover.
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { composeServices } from '@theguild/federation-composition';
import { parse } from 'graphql';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';

/** The repository root, where supergraph.yaml and supergraph.graphql live. */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const SUPERGRAPH_CONFIG_PATH = resolve(REPO_ROOT, 'supergraph.yaml');
export const SUPERGRAPH_PATH = resolve(REPO_ROOT, 'supergraph.graphql');

const supergraphConfigSchema = z.object({
  federation_version: z.string(),
  subgraphs: z.record(
    z.string().regex(/^[a-z][a-z0-9_-]*$/),
    z.object({
      routing_url: z.url(),
      schema: z.object({ file: z.string() }),
    }),
  ),
});

export interface SubgraphSource {
  name: string;
  url: string;
  /** Absolute path of the schema file. */
  schemaPath: string;
  typeDefs: string;
}

/** Reads supergraph.yaml and each subgraph's schema file (paths relative to the YAML file, as rover reads them). */
export function readSupergraphConfig(path = SUPERGRAPH_CONFIG_PATH): SubgraphSource[] {
  const config = supergraphConfigSchema.parse(parseYaml(readFileSync(path, 'utf8')));
  return Object.entries(config.subgraphs).map(([name, subgraph]) => {
    const schemaPath = resolve(dirname(path), subgraph.schema.file);
    return { name, url: subgraph.routing_url, schemaPath, typeDefs: readFileSync(schemaPath, 'utf8') };
  });
}

export class CompositionError extends Error {
  override readonly name = 'CompositionError';
  constructor(readonly errors: readonly { message: string }[]) {
    super(`Composition failed:\n  ${errors.map((error) => error.message).join('\n  ')}`);
  }
}

/** Composes subgraphs into a supergraph SDL; `urls` overrides routing URLs by subgraph name. */
export function composeSupergraph(subgraphs: SubgraphSource[], urls: Record<string, string> = {}): string {
  const result = composeServices(
    subgraphs.map((subgraph) => ({
      name: subgraph.name,
      url: urls[subgraph.name] ?? subgraph.url,
      typeDefs: parse(subgraph.typeDefs),
    })),
  );
  if (result.errors) throw new CompositionError(result.errors);
  return result.supergraphSdl;
}
