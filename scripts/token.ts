// npm run token -- --role ADMIN [--sub <user global ID>] [--expires 1h]: mints a development (HS256) token, with the
// JWT_SECRET, JWT_ISSUER and JWT_AUDIENCE of the environment when they are set.
import { tokenCommand } from './token-command.js';

process.exitCode = await tokenCommand(process.argv.slice(2), process.env, console);
