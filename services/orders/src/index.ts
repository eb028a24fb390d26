import { createLogger, runProcess } from '@ordergraph/common';
import { loadOrdersConfig } from './config.js';
import { createOrdersService } from './server.js';

const logger = createLogger('orders');
runProcess(logger, async () => {
  const config = loadOrdersConfig();
  const service = await createOrdersService(config, logger);
  await service.listen(config.PORT, config.HOST);
  return service;
});
