// Tracing starts first, before anything imports http or graphql.
import { startTelemetry } from '@ordergraph/core/telemetry';
// Loads no OpenTelemetry package itself; the plugin is imported only when tracing is on.
import { clientClosedSpans, loadOpenTelemetryPlugin } from './observability/opentelemetry.js';

const telemetry = await startTelemetry('gateway', { instrument: false, spanProcessors: [clientClosedSpans] });
const { createLogger, runProcess } = await import('@ordergraph/core');
const { loadGatewayConfig } = await import('./config.js');
const { createGateway } = await import('./gateway.js');
const { SUPERGRAPH_PATH } = await import('@ordergraph/composition/paths');
const { supergraphFile } = await import('./subgraphs/supergraph-source.js');
const { collectWhenIdle } = await import('./server/idle-collection.js');
const openTelemetry = telemetry ? await loadOpenTelemetryPlugin() : undefined;

const logger = createLogger('gateway');
runProcess(
  logger,
  async () => {
    const config = loadGatewayConfig();
    const supergraphPath = config.SUPERGRAPH_PATH ?? SUPERGRAPH_PATH;
    const gateway = createGateway({ config, supergraph: supergraphFile(supergraphPath, logger), logger, openTelemetry });
    await gateway.listen(config.PORT, config.HOST);
    // What a burst (a flood of refused requests, say) grew, given back once the gateway is quiet.
    collectWhenIdle();
    return gateway;
  },
  telemetry,
);
