// Tracing starts first, before anything imports http, express or graphql, so that their instrumentation wraps them.
import { startTelemetry } from '@ordergraph/core/telemetry';

const telemetry = await startTelemetry('catalog', { instrument: true });
const { createLogger, runProcess, subgraphHost } = await import('@ordergraph/core');
const { loadCatalogConfig } = await import('./config.js');
const { createCatalogService } = await import('./server.js');

const logger = createLogger('catalog');
runProcess(
  logger,
  async () => {
    const config = loadCatalogConfig();
    const service = await createCatalogService(config, logger);
    await service.listen(config.PORT, subgraphHost(config));
    return service;
  },
  telemetry,
);
