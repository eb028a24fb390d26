// npm run example: the client example against a running supergraph (npm start), as user1@example.com by default.
//   TOKEN (required: a bearer token, such as the USER token npm start prints)   ORDERGRAPH_URL (default http://localhost:4000/graphql)
// A failure is one line on stderr and exit code 1: the step that failed and what the gateway said.
import { runExample } from './example.js';

const token = process.env['TOKEN'];
if (!token) {
  console.error('Set TOKEN to a bearer token: export TOKEN=$(npm run -s token -- --role USER)');
  process.exit(2);
}
try {
  // An empty ORDERGRAPH_URL (a copied .env) is unset.
  await runExample({ url: process.env['ORDERGRAPH_URL'] || 'http://localhost:4000/graphql', token });
} catch (error) {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
}
