// Tracing starts first, before anything imports http, express or graphql, so that their instrumentation wraps them.
import { startTelemetry } from '@ordergraph/core/telemetry';

const telemetry = await startTelemetry('orders', { instrument: true });
const { createLogger, runProcess, subgraphHost } = await import('@ordergraph/core');
const { loadOrdersConfig } = await import('./config.js');
const { createOrdersService } = await import('./server.js');

const logger = createLogger('orders');
runProcess(
  logger,
  async () => {
    const config = loadOrdersConfig();
    const service = await createOrdersService(config, logger);
    await service.listen(config.PORT, subgraphHost(config));
    return service;
  },
  telemetry,
);
