// The edge settings: defaults, what production requires, the persisted-query manifest check, and the announced
// in-memory fallback when REDIS_URL is unset.
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '@ordergraph/core';
import { loadGatewayConfig } from '../src/config.js';
import { readPersistedQueryManifest } from '../src/persisted-queries.js';
import { openSharedState } from '../src/shared-state.js';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe('edge settings', () => {
  it('default to the limits of the design', () => {
    expect(loadGatewayConfig({})).toMatchObject({
      MAX_DEPTH: 7,
      MAX_COMPLEXITY: 1000,
      MAX_ALIASES: 30,
      MAX_TOKENS: 5000,
      MAX_DIRECTIVES_PER_FIELD: 10,
      RATE_LIMIT_WINDOW_MS: 60_000,
      RATE_LIMIT_MAX: 1000,
      RATE_LIMIT_EXPENSIVE_MAX: 10,
      RATE_LIMIT_EXPENSIVE_OPERATIONS: ['GenerateReport', 'ExportAllUsers', 'BulkSearch'],
      TRUST_PROXY_HOPS: 0,
      PERSISTED_QUERIES: 'apq',
    });
  });

  it('read lists and numbers from the environment and name a bad variable', () => {
    expect(loadGatewayConfig({ RATE_LIMIT_EXPENSIVE_OPERATIONS: ' Export , Import,', MAX_DEPTH: '5' })).toMatchObject({
      RATE_LIMIT_EXPENSIVE_OPERATIONS: ['Export', 'Import'],
      MAX_DEPTH: 5,
    });
    expect(() => loadGatewayConfig({ RATE_LIMIT_WINDOW_MS: '1500' })).toThrow(/RATE_LIMIT_WINDOW_MS: must be a whole number of seconds/);
    expect(() => loadGatewayConfig({ REDIS_URL: 'http://localhost' })).toThrow(/REDIS_URL/);
  });

  it('require a manifest in allow-list mode', () => {
    expect(() => loadGatewayConfig({ PERSISTED_QUERIES: 'allowlist' })).toThrow(/PERSISTED_QUERIES_MANIFEST: must be set/);
  });
});

describe('the persisted-query manifest', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ordergraph-manifest-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const write = (name: string, content: unknown) => {
    const path = join(dir, name);
    writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
    return path;
  };
  const manifest = (operations: unknown[]) => ({ format: 'apollo-persisted-query-manifest', version: 1, operations });

  it('maps each operation ID to its body', () => {
    const body = '{ products { id } }';
    const path = write('good.json', manifest([{ id: sha256(body), body, name: 'Products', type: 'query' }]));
    expect(readPersistedQueryManifest(path)).toEqual(new Map([[sha256(body), body]]));
    expect(() => readPersistedQueryManifest(write('wrong-id.json', manifest([{ id: sha256('{ users { id } }'), body }])))).toThrow(/not the SHA-256 of their body/);
  });

  it('refuses a file in another format', () => {
    for (const [name, content] of [
      ['not-json.json', '{'],
      ['other-format.json', { format: 'something-else', version: 1, operations: [] }],
    ] as const) {
      expect(() => readPersistedQueryManifest(write(name, content))).toThrow(ConfigError);
    }
  });
});

describe('without REDIS_URL', () => {
  it('announces the in-memory development fallback, as an error in production', async () => {
    for (const [production, level] of [[false, 40], [true, 50]] as const) {
      const lines: { level: number; msg: string }[] = [];
      const logger = pino(
        { level: 'info' },
        new Writable({
          write(chunk: Buffer, _encoding, done) {
            lines.push(JSON.parse(chunk.toString()));
            done();
          },
        }),
      );
      const state = openSharedState(undefined, logger, production);
      expect(state.redis).toBeUndefined();
      await state.close();
      expect(lines).toEqual([expect.objectContaining({ level, msg: expect.stringMatching(/No Redis is configured.*this process only/) })]);
    }
  });
});
