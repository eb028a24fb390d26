// What npm start prints while a person waits: one line per process as it starts and becomes ready, then one summary
// box with the URLs and the modes in force (which store, and what a restart does to its data), the tokens below it.
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

/** A setting from the environment; empty counts as unset, as in every process's loadConfig (`JWT_SECRET=` in a .env). */
export const setting = (env: NodeJS.ProcessEnv, name: string): string | undefined => env[name] || undefined;

const isSet = (value: string | undefined) => value !== undefined && value !== '' && value !== '0' && value !== 'false';

/**
 * Whether to colour what goes to `stream`: FORCE_COLOR wins (as in Node.js), then NO_COLOR, then only a terminal
 * outside CI, where logs are read as text.
 */
export function colourWanted(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): boolean {
  if (env['FORCE_COLOR'] !== undefined) return env['FORCE_COLOR'] !== '0' && env['FORCE_COLOR'] !== 'false';
  if (env['NO_COLOR']) return false;
  return stream.isTTY === true && !isSet(env['CI']) && env['TERM'] !== 'dumb';
}

/** The child processes' JSON log lines are rewritten for a person at a terminal only: piped or in CI they stay JSON. */
export const prettyLogsWanted = (stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): boolean => stream.isTTY === true && !isSet(env['CI']);

export interface Paint {
  green(text: string): string;
  red(text: string): string;
  yellow(text: string): string;
  dim(text: string): string;
}

export function paint(colour: boolean): Paint {
  const sgr = (open: number, close: number) => (text: string) => (colour ? `\u001b[${open}m${text}\u001b[${close}m` : text);
  return { green: sgr(32, 39), red: sgr(31, 39), yellow: sgr(33, 39), dim: sgr(2, 22) };
}
const plain = paint(false);

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const column = (name: string) => name.padEnd(8);

/** Progress of one process: a line when it starts, one when it is ready or fails, each with the time taken. */
export function processProgress(name: string, port: number, write: (line: string) => void = console.log, colours: Paint = plain) {
  const started = Date.now();
  write(`  ${colours.dim('…')}  ${column(name)} starting on :${port}`);
  return {
    ready: () => write(`  ${colours.green('✓')}  ${column(name)} ready on :${port} in ${seconds(Date.now() - started)}`),
    failed: (reason: string) => write(`  ${colours.red('✗')}  ${column(name)} failed after ${seconds(Date.now() - started)}: ${reason}`),
  };
}

/** pino's numeric levels, as words. */
const LEVELS: Record<number, string> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };
/** Fields every line carries, or that the rendered line already shows. */
const SHOWN = new Set(['level', 'time', 'service', 'name', 'msg', 'pid', 'hostname']);

/**
 * One log line of a child as a person reads it beside the progress lines (`  warn  orders   No Redis is configured
 * ... event=x`), the other fields as key=value; a line that is not a pino JSON object is returned as it came.
 */
export function renderLogLine(name: string, line: string, colours: Paint = plain): string {
  let entry: unknown;
  try {
    entry = JSON.parse(line);
  } catch {
    return line;
  }
  if (typeof entry !== 'object' || entry === null || typeof (entry as { level?: unknown }).level !== 'number') return line;
  const { level, msg, ...rest } = entry as { level: number; msg?: unknown } & Record<string, unknown>;
  const word = LEVELS[level] ?? String(level);
  const painted = level >= 50 ? colours.red(word.padEnd(5)) : level >= 40 ? colours.yellow(word.padEnd(5)) : colours.dim(word.padEnd(5));
  const fields = Object.entries(rest)
    .filter(([key]) => !SHOWN.has(key))
    .map(([key, value]) => {
      const shown = key === 'err' && typeof value === 'object' && value !== null && 'message' in value ? (value as { message: unknown }).message : value;
      return `${key}=${typeof shown === 'string' ? shown : JSON.stringify(shown)}`;
    });
  return [`  ${painted} ${column(name)}`, typeof msg === 'string' ? msg : '', ...fields].filter(Boolean).join(' ').replace(/[\r\n]+/g, ' ');
}

export interface Summary {
  url: string;
  graphiql: boolean;
  store: StoreMode;
  redis: string;
}

/** Widest line inside the box: with its border the box stays under 100 columns on any terminal of 100 or more. */
export const BOX_TEXT_WIDTH = 92;
const LABEL = 10;

/** `text` wrapped at spaces into lines of `width` at most; a word longer than a line is cut. */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line === '') line = word;
    else if (line.length + 1 + word.length <= width) line = `${line} ${word}`;
    else {
      lines.push(line);
      line = word;
    }
    for (; line.length > width; line = line.slice(width)) lines.push(line.slice(0, width));
  }
  return [...lines, line];
}

/**
 * The summary as one box, drawn here rather than with boxen, which wraps to the terminal's width: URLs, store and
 * Redis, each wrapped under its label. The tokens go below it (tokenLines), whole on lines of their own, to be copied.
 */
export function summaryBox({ url, graphiql, store, redis }: Summary): string {
  const labelled = (label: string, text: string) => wrap(text, BOX_TEXT_WIDTH - LABEL).map((line, i) => `${(i === 0 ? label : '').padEnd(LABEL)}${line}`);
  const lines = [
    'ordergraph is running',
    '',
    ...labelled('GraphQL', url),
    ...(graphiql ? labelled('GraphiQL', `${url}  (open it in a browser)`) : []),
    '',
    ...labelled('Store', store.label),
    ...labelled('', store.restart),
    ...labelled('Redis', redis),
    '',
    ...labelled('Tokens', 'below, valid 12 h; `npm run token -- --role ADMIN|USER` mints more'),
    'Ctrl-C stops everything.',
  ];
  const width = Math.max(...lines.map((line) => line.length));
  const rule = '─'.repeat(width + 2);
  return [`╭${rule}╮`, ...lines.map((line) => `│ ${line.padEnd(width)} │`), `╰${rule}╯`].join('\n');
}

/** Each token whole on a line of its own, under its label, so that a double click selects exactly the token. */
export const tokenLines = (tokens: { label: string; token: string }[]): string => tokens.map(({ label, token }) => `${label}:\n${token}`).join('\n');

