// supergraph.yaml (rover's format) -> a composed Federation 2 supergraph, with a composition library instead of rover.
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { composeServices } from '@theguild/federation-composition';
import { parse } from 'graphql';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { REPO_ROOT } from './paths.js';

export * from './paths.js';
const SUPERGRAPH_CONFIG_PATH = resolve(REPO_ROOT, 'supergraph.yaml');

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

const readConfigFile = (path: string) => supergraphConfigSchema.parse(parseYaml(readFileSync(path, 'utf8')));

/** The names of the subgraphs supergraph.yaml lists, in its order; reads no schema file (the gateway's image has none). */
export const readSubgraphNames = (path = SUPERGRAPH_CONFIG_PATH): string[] => Object.keys(readConfigFile(path).subgraphs);

/** Reads supergraph.yaml and each subgraph's schema file (paths relative to the YAML file, as rover reads them). */
export function readSupergraphConfig(path = SUPERGRAPH_CONFIG_PATH): SubgraphSource[] {
  const config = readConfigFile(path);
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

export interface Composition {
  /** The supergraph SDL a Federation 2 gateway serves. */
  supergraphSdl: string;
  /** The API schema clients see (no federation machinery, no @inaccessible elements). */
  publicSdl: string;
}

/** Composes subgraphs; `urls` overrides routing URLs by subgraph name. Throws CompositionError when they do not compose. */
export function compose(subgraphs: SubgraphSource[], urls: Record<string, string> = {}): Composition {
  const result = composeServices(
    subgraphs.map((subgraph) => ({
      name: subgraph.name,
      url: urls[subgraph.name] ?? subgraph.url,
      typeDefs: parse(subgraph.typeDefs),
    })),
  );
  if (result.errors) throw new CompositionError(result.errors);
  return { supergraphSdl: result.supergraphSdl, publicSdl: result.publicSdl };
}

/** Composes subgraphs into a supergraph SDL; `urls` overrides routing URLs by subgraph name. */
export function composeSupergraph(subgraphs: SubgraphSource[], urls: Record<string, string> = {}): string {
  return compose(subgraphs, urls).supergraphSdl;
}

/**
 * Writes a supergraph file by renaming a complete temporary file over it, so a gateway re-reading the file (see
 * supergraph-source.ts) sees the old supergraph or the new one, never half of one.
 */
export function writeSupergraph(path: string, sdl: string): void {
  const temporary = resolve(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
  writeFileSync(temporary, sdl);
  renameSync(temporary, path);
}
