import { createLogger, runProcess } from '@ordergraph/common';
import { loadCatalogConfig } from './config.js';
import { createCatalogService } from './server.js';

const logger = createLogger('catalog');
runProcess(logger, async () => {
  const config = loadCatalogConfig();
  const service = await createCatalogService(config, logger);
  await service.listen(config.PORT, config.HOST);
  return service;
});
