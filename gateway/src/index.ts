import { createLogger, runProcess } from '@ordergraph/common';
import { loadGatewayConfig } from './config.js';
import { createGateway } from './gateway.js';
import { SUPERGRAPH_PATH } from './supergraph.js';
import { supergraphFile } from './supergraph-source.js';

const logger = createLogger('gateway');
runProcess(logger, async () => {
  const config = loadGatewayConfig();
  const supergraphPath = config.SUPERGRAPH_PATH ?? SUPERGRAPH_PATH;
  const gateway = createGateway({ config, supergraph: supergraphFile(supergraphPath, logger), logger });
  await gateway.listen(config.PORT, config.HOST);
  return gateway;
});
