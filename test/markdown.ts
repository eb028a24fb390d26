// How the documentation tests read markdown: which files are documentation, the text outside code blocks, GitHub's
// heading anchors, link targets, and the paragraphs of a page.
import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { REPO_ROOT } from '@ordergraph/composition';

/** The markdown files under docs/, folders included, as paths from the repository's root, sorted. */
function docsPages(folder = 'docs'): string[] {
  const absolute = resolve(REPO_ROOT, folder);
  if (!existsSync(absolute)) return [];
  return readdirSync(absolute, { withFileTypes: true })
    .flatMap((entry) => (entry.isDirectory() ? docsPages(join(folder, entry.name)) : entry.name.endsWith('.md') ? [`${folder}/${entry.name}`] : []))
    .sort();
}

export const DOC_PAGES = docsPages();
export const DOCS = ['README.md', 'ARCHITECTURE.md', 'bench/README.md', ...DOC_PAGES];

/** The text outside fenced code blocks, line by line (a `#` in a shell block is no heading, a `[x](y)` there no link). */
export function prose(markdown: string): string[] {
  let fence: string | undefined;
  return markdown.split('\n').map((line) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker && (fence === undefined || marker.startsWith(fence))) {
      fence = fence === undefined ? marker : undefined;
      return '';
    }
    return fence === undefined ? line : '';
  });
}

/** GitHub's anchor for a heading: lowercase, punctuation other than `-` and `_` dropped, each space a `-`; repeats get -1, -2... */
export function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // a link's text only
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
}

export function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const line of prose(markdown)) {
    const heading = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const base = slug(heading);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    result.add(count === 0 ? base : `${base}-${count}`);
  }
  return result;
}

/** Every link target of a markdown text, with its line: `[text](target)`, `![alt](target)`, code spans left out. */
export function links(markdown: string): { line: number; target: string }[] {
  return prose(markdown).flatMap((text, index) =>
    [...text.replace(/`[^`]*`/g, '``').matchAll(/\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/g)].map((match) => ({ line: index + 1, target: match[1]! })),
  );
}

/**
 * The paragraphs of a page, each with its first line and its length in lines. A paragraph is a run of non-blank lines
 * that is not a list, a table, a heading, a code block, a quote or an HTML comment; a list item's continuation lines,
 * indented or not, belong to its list.
 */
export function paragraphs(markdown: string): { line: number; lines: number }[] {
  const found: { line: number; lines: number }[] = [];
  let current: { line: number; lines: number } | undefined;
  let inList = false;
  let inComment = false;
  const end = () => {
    if (current) found.push(current);
    current = undefined;
  };
  prose(markdown).forEach((text, index) => {
    // prose() blanks a code block's lines, fences included: a code block ends a paragraph as a blank line does.
    if (inComment) {
      if (text.includes('-->')) inComment = false;
      return;
    }
    if (text.trim() === '') {
      end();
      inList = false;
      return;
    }
    if (/^\s*<!--/.test(text)) {
      end();
      inComment = !text.includes('-->');
      return;
    }
    if (/^\s*(?:[-*+]|\d+[.)])\s/.test(text)) {
      end();
      inList = true;
      return;
    }
    if (/^\s*(?:\||#{1,6}\s|>)/.test(text)) {
      end();
      inList = false;
      return;
    }
    if (inList) return;
    if (current) current.lines += 1;
    else current = { line: index + 1, lines: 1 };
  });
  end();
  return found;
}
