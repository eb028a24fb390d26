// Generated files are committed, so they must match their sources: the supergraph composed from supergraph.yaml, and
// each subgraph's resolver types generated from its schema.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, SUPERGRAPH_PATH, composeSupergraph, readSupergraphConfig } from '@ordergraph/gateway/supergraph';

const run = promisify(execFile);

describe('generated files are fresh', () => {
  it('supergraph.graphql is what npm run compose writes', () => {
    expect(readFileSync(SUPERGRAPH_PATH, 'utf8')).toBe(composeSupergraph(readSupergraphConfig()));
  });

  it.each(['users', 'orders', 'catalog'])('the %s resolver types match the schema', async (service) => {
    const cwd = resolve(REPO_ROOT, 'services', service);
    const bin = resolve(REPO_ROOT, 'node_modules/.bin/graphql-codegen');
    // --check exits non-zero when the generated file differs from what the schema produces.
    await expect(run(bin, ['--config', 'codegen.ts', '--check'], { cwd })).resolves.toBeDefined();
  }, 60_000);
});
