import { createLogger, runProcess } from '@ordergraph/common';
import { loadUsersConfig } from './config.js';
import { createUsersService } from './server.js';

const logger = createLogger('users');
runProcess(logger, async () => {
  const config = loadUsersConfig();
  const service = await createUsersService(config, logger);
  await service.listen(config.PORT, config.HOST);
  return service;
});
