// The documentation's client references against the code: the configuration reference of docs/configuration.md is
// what `npm run docs:config` generates from the zod schemas, and the error table of docs/api.md lists every
// extensions.code the processes send.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ErrorCode } from '@ordergraph/core';
import { REPO_ROOT } from '@ordergraph/composition';
import { configReference, readConfigurationDoc, withConfigReference } from '../scripts/config-reference.js';

describe('docs/configuration.md', () => {
  it('has the configuration reference the configuration schemas generate (npm run docs:config)', async () => {
    const reference = await configReference();
    expect(reference).toContain('| `DATA_DIR` |');
    expect(withConfigReference(readConfigurationDoc(), reference)).toBe(readConfigurationDoc());
  });
});

describe('docs/api.md', () => {
  it('gives an HTTP status and an action for every extensions.code, and for no code the code lacks', () => {
    const api = readFileSync(resolve(REPO_ROOT, 'docs/api.md'), 'utf8');
    const table = /<!-- error-codes:start -->([\s\S]*)<!-- error-codes:end -->/.exec(api)![1]!;
    const documented = [...table.matchAll(/^\| `([A-Z_]+)` \| ([^|]+) \| ([^|]+) \|$/gm)].map((row) => row[1]);
    // Codes graphql-yoga sends itself, beside ours.
    const codes = [...Object.values(ErrorCode), 'OPERATION_RESOLUTION_FAILURE'];
    expect([...documented].sort()).toEqual([...codes].sort());
  });
});
