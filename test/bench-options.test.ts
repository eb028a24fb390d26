// npm run bench's --help against the options it parses, and where its chart goes by default.
import { execFileSync } from 'node:child_process';
import { relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '@ordergraph/composition';
import { DEFAULT_CHART, GATEWAYS_HELP, GATEWAYS_OPTIONS } from '../bench/gateways-options.js';

describe('npm run bench', () => {
  it('lists every option it parses in --help, and none it does not', () => {
    const listed = [...GATEWAYS_HELP.matchAll(/^ {2}--([a-z-]+)/gm)].map((match) => match[1]);
    expect(listed.sort()).toEqual(Object.keys(GATEWAYS_OPTIONS).sort());
  });

  it('writes its chart into a git-ignored folder by default, not over the committed chart', () => {
    const chart = relative(REPO_ROOT, DEFAULT_CHART);
    expect(chart).not.toBe('bench/results.svg');
    // check-ignore exits 1 (and execFileSync throws) for a path git would track.
    expect(execFileSync('git', ['check-ignore', chart], { cwd: REPO_ROOT, encoding: 'utf8' }).trim()).toBe(chart);
    expect(GATEWAYS_HELP).toContain(chart);
  });
});
