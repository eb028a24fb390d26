// The README's client references against the code: the configuration reference is what `npm run docs:config`
// generates from the zod schemas, and the error table lists every extensions.code the processes send.
import { describe, expect, it } from 'vitest';
import { ErrorCode } from '@ordergraph/core';
import { configReference, readReadme as readme, withConfigReference } from '../scripts/config-reference.js';

describe('README.md', () => {
  it('has the configuration reference the configuration schemas generate (npm run docs:config)', async () => {
    const reference = await configReference();
    expect(reference).toContain('| `DATA_DIR` |');
    expect(withConfigReference(readme(), reference)).toBe(readme());
  });

  it('gives an HTTP status and an action for every extensions.code, and for no code the code lacks', () => {
    const table = /<!-- error-codes:start -->([\s\S]*)<!-- error-codes:end -->/.exec(readme())![1]!;
    const documented = [...table.matchAll(/^\| `([A-Z_]+)` \| ([^|]+) \| ([^|]+) \|$/gm)].map((row) => row[1]);
    // Codes graphql-yoga sends itself, beside ours.
    const codes = [...Object.values(ErrorCode), 'OPERATION_RESOLUTION_FAILURE'];
    expect([...documented].sort()).toEqual([...codes].sort());
  });
});
