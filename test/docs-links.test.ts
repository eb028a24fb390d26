// Every relative link of the documentation resolves in a clone of this repository: to a file inside it, and an
// `#anchor` to a heading of that file as GitHub names it. Links to other sites are not followed.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '@ordergraph/composition';
import { DOCS, anchors, links, slug } from './markdown.js';

const external = (target: string) => /^[a-z][a-z0-9+.-]*:/i.test(target);

/** What is wrong with one link of `file` (a path from the repository's root), or undefined when it resolves. */
function broken(file: string, target: string): string | undefined {
  const [path, anchor] = target.split('#', 2) as [string, string | undefined];
  const absolute = path === '' ? resolve(REPO_ROOT, file) : resolve(REPO_ROOT, dirname(file), decodeURIComponent(path));
  const inside = relative(REPO_ROOT, absolute);
  if (inside.startsWith('..') || inside.startsWith(sep)) return 'points outside the repository';
  if (!existsSync(absolute)) return 'no such file';
  if (anchor === undefined || anchor === '') return undefined;
  if (statSync(absolute).isDirectory() || !absolute.endsWith('.md')) return 'an anchor into a file that is not markdown';
  return anchors(readFileSync(absolute, 'utf8')).has(decodeURIComponent(anchor).toLowerCase()) ? undefined : `no heading #${anchor}`;
}

describe('documentation links', () => {
  it('reads GitHub anchors the way GitHub writes them', () => {
    expect(slug('Deferred fields: `@defer`')).toBe('deferred-fields-defer');
    expect(slug('Drain: deploys without a failed request')).toBe('drain-deploys-without-a-failed-request');
    expect(slug('Limits, persisted queries, caching and tracing')).toBe('limits-persisted-queries-caching-and-tracing');
    expect(slug('npm start (ports of the processes it starts)')).toBe('npm-start-ports-of-the-processes-it-starts');
    expect(slug('`SUBGRAPH_<NAME>_URL` and snake_case')).toBe('subgraph_name_url-and-snake_case');
    expect([...anchors('# A\n```sh\n# not a heading\n```\n## A\n## B')]).toEqual(['a', 'a-1', 'b']);
    expect(links('[a](b.md) `[c](d.md)` ![e](f.svg "t")\n```\n[g](h.md)\n```').map((link) => link.target)).toEqual(['b.md', 'f.svg']);
  });

  it.each(DOCS)('%s: every relative link names a file of the repository and a heading of it', (file) => {
    const failures = links(readFileSync(resolve(REPO_ROOT, file), 'utf8'))
      .filter(({ target }) => !external(target))
      .map(({ line, target }) => [line, target, broken(file, target)] as const)
      .filter(([, , problem]) => problem !== undefined)
      .map(([line, target, problem]) => `${file}:${line} (${target}): ${problem}`);
    expect(failures).toEqual([]);
  });
});
