// The `subgraph` module beside each schema supergraph.yaml lists: where scripts read a subgraph's settings from.
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { readSupergraphConfig, type SubgraphSource } from '@ordergraph/composition';
import type { SubgraphModule } from '@ordergraph/subgraph-kit';

/** Each listed subgraph, in supergraph.yaml's order, with its server module's `subgraph`. */
export function subgraphModules(config?: string): Promise<{ source: SubgraphSource; subgraph: SubgraphModule<unknown> }[]> {
  return Promise.all(
    readSupergraphConfig(config).map(async (source) => {
      const server = pathToFileURL(join(dirname(source.schemaPath), 'server.ts')).href;
      const { subgraph } = (await import(server)) as { subgraph: SubgraphModule<unknown> };
      return { source, subgraph };
    }),
  );
}
