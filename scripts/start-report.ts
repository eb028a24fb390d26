// What npm start prints while a person waits: one line per process as it starts and becomes ready, then one summary
// box with the URLs, the tokens and the modes in force (which store, and what a restart does to its data).
import { isAbsolute, resolve } from 'node:path';

export interface StoreMode {
  label: string;
  restart: string;
}

/** Which store the subgraphs use with this environment, and what a restart does to its data. */
export function storeMode(env: NodeJS.ProcessEnv): StoreMode {
  if (env['MONGO_URL']) return { label: 'MongoDB (MONGO_URL)', restart: 'a restart keeps every write' };
  const dataDir = env['DATA_DIR'];
  if (dataDir) {
    const path = isAbsolute(dataDir) ? dataDir : resolve(dataDir);
    return { label: `embedded, kept in ${path}`, restart: 'a restart keeps every write (seed data is loaded into an empty store only)' };
  }
  return { label: 'embedded, in memory', restart: 'a restart loses every write and starts from the seed data again (set DATA_DIR to keep them)' };
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** Progress of one process: a line when it starts, one when it is ready or fails, each with the time taken. */
export function processProgress(name: string, port: number, write: (line: string) => void = console.log) {
  const started = Date.now();
  const label = name.padEnd(8);
  write(`  …  ${label} starting on :${port}`);
  return {
    ready: () => write(`  ✓  ${label} ready on :${port} in ${seconds(Date.now() - started)}`),
    failed: (reason: string) => write(`  ✗  ${label} failed after ${seconds(Date.now() - started)}: ${reason}`),
  };
}

export interface Summary {
  url: string;
  graphiql: boolean;
  tokens: { label: string; token: string }[];
  store: StoreMode;
  redis: string;
}

/**
 * The summary as one box. Drawn here rather than with boxen, which wraps lines wider than the terminal: a token
 * broken over two lines could no longer be copied.
 */
export function summaryBox({ url, graphiql, tokens, store, redis }: Summary): string {
  const lines = [
    'ordergraph is running',
    '',
    `GraphQL   ${url}`,
    ...(graphiql ? [`GraphiQL  ${url}  (open it in a browser)`] : []),
    '',
    `Store     ${store.label}`,
    `          ${store.restart}`,
    `Redis     ${redis}`,
    '',
    ...tokens.flatMap(({ label, token }) => [`${label}:`, `  ${token}`]),
    '',
    'Ctrl-C stops everything.',
  ];
  const width = Math.max(...lines.map((line) => line.length));
  const rule = '─'.repeat(width + 2);
  return [`╭${rule}╮`, ...lines.map((line) => `│ ${line.padEnd(width)} │`), `╰${rule}╯`].join('\n');
}
