// What npm start runs, where: the subgraphs supergraph.yaml lists, every port from the environment, and each process
// told where the others are.
import { dirname, join, relative } from 'node:path';
import { z } from 'zod';
import { REPO_ROOT, envNameOf, readSupergraphConfig, subgraphUrlVariable, type SubgraphSource } from '@ordergraph/composition';
import { loadConfig } from '@ordergraph/core';

const port = (fallback: number) => z.coerce.number().int().min(1).max(65535).default(fallback);

/**
 * The gateway listens on PORT, as in its image; each subgraph supergraph.yaml lists on <NAME>_PORT, by default the
 * port of its routing URL there.
 */
export function startEnvSchema(subgraphs: SubgraphSource[] = readSupergraphConfig()) {
  return z.object({
    PORT: port(4000).describe('The gateway\'s port.'),
    ...Object.fromEntries(
      subgraphs.map(({ name, url }) => [`${envNameOf(name)}_PORT`, port(Number(new URL(url).port)).describe(`The ${name} subgraph's port.`)]),
    ),
  });
}

export interface Launch {
  name: string;
  /** The process's entry module, relative to the repository root: the index.ts beside the subgraph's schema. */
  entry: string;
  port: number;
  env: Record<string, string>;
}

/**
 * The subgraphs supergraph.yaml lists (each told where every other one listens, as <NAME>_URL), then the gateway
 * (told where each listens, as SUBGRAPH_<NAME>_URL).
 */
export function startPlan(env: NodeJS.ProcessEnv = process.env, config?: string): { subgraphs: Launch[]; gateway: Launch } {
  const sources = readSupergraphConfig(config);
  const ports = loadConfig(startEnvSchema(sources), env) as Record<string, number>;
  const portOf = (name: string) => ports[`${envNameOf(name)}_PORT`]!;
  const url = (name: string) => `http://127.0.0.1:${portOf(name)}/graphql`;
  const others = (name: string) => sources.filter((source) => source.name !== name);
  return {
    subgraphs: sources.map(({ name, schemaPath }) => ({
      name,
      entry: relative(REPO_ROOT, join(dirname(schemaPath), 'index.ts')),
      port: portOf(name),
      env: Object.fromEntries(others(name).map((peer) => [`${envNameOf(peer.name)}_URL`, url(peer.name)])),
    })),
    gateway: {
      name: 'gateway',
      entry: 'gateway/src/index.ts',
      port: ports['PORT']!,
      env: Object.fromEntries(sources.map(({ name }) => [subgraphUrlVariable(name), url(name)])),
    },
  };
}
