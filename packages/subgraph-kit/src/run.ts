// A subgraph's process: every services/<name>/src/index.ts is one call of runSubgraph. A subpath of its own
// (@ordergraph/subgraph-kit/run) that imports nothing but telemetry at load, because tracing must start before anything
// imports http, express or graphql, so that their instrumentation wraps them.
import { startTelemetry } from '@ordergraph/core/telemetry';
import type { SubgraphConfig } from '@ordergraph/core';
import type { SubgraphModule } from './subgraph.js';

/** Starts tracing, then loads the subgraph's module, reads its settings, listens, and handles signals (runProcess). */
export async function runSubgraph<Config extends SubgraphConfig>(name: string, load: () => Promise<{ subgraph: SubgraphModule<Config> }>): Promise<void> {
  const telemetry = await startTelemetry(name, { instrument: true });
  const { createLogger, runProcess, subgraphHost } = await import('@ordergraph/core');
  const { subgraph } = await load();
  const logger = createLogger(name);
  runProcess(
    logger,
    async () => {
      const config = subgraph.loadConfig();
      const service = await subgraph.create(config, logger);
      await service.listen(config.PORT, subgraphHost(config));
      return service;
    },
    telemetry,
  );
}
