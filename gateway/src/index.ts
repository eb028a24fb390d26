import { readFileSync } from 'node:fs';
import { createLogger, runProcess } from '@ordergraph/common';
import { loadGatewayConfig } from './config.js';
import { createGateway } from './gateway.js';
import { SUPERGRAPH_PATH } from './supergraph.js';

const logger = createLogger('gateway');
runProcess(logger, async () => {
  const config = loadGatewayConfig();
  const supergraphPath = config.SUPERGRAPH_PATH ?? SUPERGRAPH_PATH;
  const gateway = createGateway({ config, supergraph: readFileSync(supergraphPath, 'utf8'), logger });
  await gateway.listen(config.PORT, config.HOST);
  return gateway;
});
