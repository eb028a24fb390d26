// The documentation a person reads stays readable (STYLE.md, "Docs a person reads"): short paragraphs in the user
// pages, no benchmark figure outside the pages that keep them, and every setting a page names one the code knows.
import { readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '@ordergraph/composition';
import { configReference } from '../scripts/config-reference.js';
import { DOC_PAGES, links, paragraphs, prose } from './markdown.js';

/** Pages that keep measurements, decisions and history, and the generated reference: no user page's rules apply. */
const NOT_USER_PAGES = ['docs/configuration.md', 'docs/design.md', 'docs/changelog.md'];
const USER_PAGES = ['README.md', ...DOC_PAGES.filter((page) => !NOT_USER_PAGES.includes(page))];
const MAX_PARAGRAPH_LINES = 8;
const read = (file: string) => readFileSync(resolve(REPO_ROOT, file), 'utf8');

/**
 * A benchmark figure: a measured ratio (`1.7x`, `0.93-1.05x`), a rate (`req/s`, `ms/req`), CPU time per request or
 * call (`58 µs per request`, `3.7 ms of CPU`), a share of CPU or of allocations (`12 % of a subgraph's CPU`,
 * `4 % less CPU`, `6 % of the gateway's sampled allocations`), or a memory peak (`peaked at 193 MB`,
 * `peak RSS 301 MB`). A setting's value (`16 MB semi-spaces`, `up to 1 MB`, `5000 ms`) is none of these.
 */
export const FIGURES: RegExp[] = [
  /(?<![\w.])\d+(?:\.\d+)?(?:\s?[-–]\s?\d+(?:\.\d+)?)?x\b/,
  /\breq\/s\b|\bms\/req\b/,
  /\d(?:\.\d+)?\s?(?:ms|µs|us)\s+(?:of\s+(?:\w+\s+)?CPU|(?:of\s+)?(?:gateway\s+)?CPU\s+)?per\s+(?:request|call|representation|gateway request)\b/,
  /\d(?:\.\d+)?\s?(?:ms|µs)\s+of\s+(?:\w+\s+)?CPU\b/,
  /\d+(?:\.\d+)?\s?%\s+(?:less|more)\s+(?:\w+\s+)?CPU\b|\d+(?:\.\d+)?\s?%\s+of\s+(?:the\s+|a\s+)?(?:\w+'s\s+)?(?:sampled\s+)?(?:CPU|allocations)\b/,
  /\bpeak(?:s|ed)?\b[^.|]{0,60}?\d+\s?MB\b|\bRSS\b[^.|]{0,40}?\d+\s?MB\b/i,
];

export function figures(markdown: string): { line: number; text: string }[] {
  return prose(markdown).flatMap((text, index) => {
    const match = FIGURES.map((pattern) => pattern.exec(text)).find((found) => found !== null);
    return match ? [{ line: index + 1, text: match[0] }] : [];
  });
}

describe('reading the rules on planted examples', () => {
  it('finds paragraphs, not lists, tables, headings, code or quotes', () => {
    const page = ['# T', 'one', 'two', '', '- a', 'lazy', '  indented', '', '| a |', '|---|', '```', 'x', 'y', '```', '> q', '', 'three', '<!-- c', 'd -->', 'four'].join('\n');
    expect(paragraphs(page)).toEqual([
      { line: 2, lines: 2 },
      { line: 17, lines: 1 },
      { line: 20, lines: 1 },
    ]);
  });

  it('finds a paragraph of nine lines', () => {
    expect(paragraphs(Array.from({ length: 9 }, (_, i) => `line ${i}`).join('\n'))).toEqual([{ line: 1, lines: 9 }]);
  });

  it('finds a figure and leaves a setting', () => {
    const planted = [
      'the deferred query costs 2.6x the CPU',
      'at 0.93-1.05x the CPU per request',
      '| mode | req/s |',
      'gateway CPU ms/req',
      '130 µs of gateway CPU per request',
      'the subgraphs spent 3.71 ms of CPU per gateway request',
      'took about 12 % of a subgraph\'s CPU',
      '4 % less CPU per request',
      '(6 % of the gateway\'s sampled allocations under (b))',
      'the gateway peaked at 156-193 MB',
      'peak RSS 301-347 MB',
    ];
    expect(planted.filter((line) => figures(line).length === 0)).toEqual([]);
    const settings = ['16 MB semi-spaces', 'a JSON body of up to 1 MB', '`SHUTDOWN_DELAY` ms (5000 in production)', 'scale on CPU (70 % by default)', '`0x1f`', 'one copy of 48', '`--max-semi-space-size=8`'];
    expect(settings.filter((line) => figures(line).length > 0)).toEqual([]);
  });
});

describe('the index of pages by kind', () => {
  /** The pages of docs/ a page links to, as paths from the repository's root. */
  const linked = (file: string) =>
    new Set(links(read(file)).map(({ target }) => relative(REPO_ROOT, resolve(REPO_ROOT, dirname(file), decodeURIComponent(target.split('#')[0]!)))));

  it('docs/README.md names every page of docs/', () => {
    const named = linked('docs/README.md');
    expect(DOC_PAGES.filter((page) => page !== 'docs/README.md' && !named.has(page))).toEqual([]);
  });

  it('docs/how-to/README.md names every how-to guide', () => {
    const named = linked('docs/how-to/README.md');
    expect(DOC_PAGES.filter((page) => page.startsWith('docs/how-to/') && page !== 'docs/how-to/README.md' && !named.has(page))).toEqual([]);
  });
});

describe('user pages', () => {
  it.each(USER_PAGES)(`%s: no paragraph runs over ${MAX_PARAGRAPH_LINES} lines`, (file) => {
    const long = paragraphs(read(file))
      .filter(({ lines }) => lines > MAX_PARAGRAPH_LINES)
      .map(({ line, lines }) => `${file}:${line}: ${lines} lines`);
    expect(long).toEqual([]);
  });

  it.each(USER_PAGES)('%s: no benchmark figure (they live in bench/README.md, docs/design.md, docs/changelog.md)', (file) => {
    expect(figures(read(file)).map(({ line, text }) => `${file}:${line}: ${text}`)).toEqual([]);
  });
});

/** Variables of other programs that pages show being set: Node.js's, the allocator's, the shell's, the terminal's, the example client's. */
const NOT_OURS = new Set(['ORDERGRAPH_URL', 'NODE_FLAGS', 'NODE_OPTIONS', 'LD_PRELOAD', 'MALLOC_CONF', 'MALLOC_ARENA_MAX', 'NO_COLOR', 'FORCE_COLOR', 'CI', 'PATH', 'TOKEN', 'ADMIN', 'USER']);

/** The settings a page names that are not among `known` (the reference's variables, `<NAME>` standing for any name). */
export function unknownSettings(text: string, known: string[]): string[] {
  const isKnown = (name: string) => NOT_OURS.has(name) || known.some((setting) => new RegExp(`^${setting.replace(/<[A-Z]+>/g, '[A-Z0-9_]+')}$`).test(name));
  // `NAME=value` in code (spans and shell blocks alike; a Docker build argument is the image's, not a setting), and
  // the first column of a table headed Setting or Variable.
  const assigned = [...text.matchAll(/(?<![\w$.-]|--build-arg )([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|[A-Z]{3,})=/g)].map((match) => match[1]!);
  const tabled = prose(text)
    .join('\n')
    .split(/\n(?=\|\s*(?:Setting|Variable)\s*\|)/)
    .slice(1)
    .flatMap((table) => {
      const rows = table.split('\n');
      const end = rows.findIndex((row) => !row.startsWith('|'));
      return rows.slice(2, end === -1 ? undefined : end).flatMap((row) => [...(row.split('|')[1] ?? '').matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((match) => match[1]!));
    });
  return [...new Set([...assigned, ...tabled])].filter((name) => !isKnown(name));
}

describe('settings the documentation names', () => {
  it('finds a setting the code does not know, set or in a settings table', () => {
    const page = ['`ENTITY_CACHE=on` and `ENTITY_CACHE_TYPO=on`', '```sh', 'DATA_DIR=.data npm start', '```', '| Setting | What |', '|---|---|', '| `REDIS_URLS` | one node |', '', '`--build-arg WORKSPACE=x`'].join('\n');
    expect(unknownSettings(page, ['ENTITY_CACHE', 'DATA_DIR', 'REDIS_URL'])).toEqual(['ENTITY_CACHE_TYPO', 'REDIS_URLS']);
  });

  it('are every one a setting of the configuration reference, which the schemas generate', async () => {
    const reference = await configReference();
    const known = [...reference.matchAll(/^\| `([A-Z][A-Z0-9_<>]*)` \|/gm)].map((match) => match[1]!);
    expect(known).toContain('ENTITY_CACHE');
    expect(USER_PAGES.flatMap((file) => unknownSettings(read(file), known).map((name) => `${file}: ${name}`))).toEqual([]);
  });
});
