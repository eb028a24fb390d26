// Tracing starts first, before anything imports http, express or graphql, so that their instrumentation wraps them.
import { startTelemetry } from '@ordergraph/core/telemetry';

const telemetry = await startTelemetry('users', { instrument: true });
const { createLogger, runProcess, subgraphHost } = await import('@ordergraph/core');
const { loadUsersConfig } = await import('./config.js');
const { createUsersService } = await import('./server.js');

const logger = createLogger('users');
runProcess(
  logger,
  async () => {
    const config = loadUsersConfig();
    const service = await createUsersService(config, logger);
    await service.listen(config.PORT, subgraphHost(config));
    return service;
  },
  telemetry,
);
