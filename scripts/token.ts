// npm run token -- --role ADMIN [--sub <user global ID>] [--expires 1h]: mints a development (HS256) token, with the
// JWT_SECRET, JWT_ISSUER and JWT_AUDIENCE of the environment when they are set, else of .env (as npm start reads it),
// so that its tokens are the ones the stack accepts.
import { existsSync } from 'node:fs';
import { tokenCommand } from './token-command.js';

// Variables already set win, as with npm start's --env-file-if-exists; no word when there is no .env.
if (existsSync('.env')) process.loadEnvFile('.env');
process.exitCode = await tokenCommand(process.argv.slice(2), process.env, console);
