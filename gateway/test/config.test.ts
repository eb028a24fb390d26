// The edge settings: defaults, what production requires, the persisted-query manifest check, and the announced
// in-memory fallback when REDIS_URL is unset.
import { createHash } from 'node:crypto';
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { ConfigError } from '@ordergraph/core';
import { loadGatewayConfig, subgraphErrorInclusion, subgraphUrlOverrides } from '../src/config.js';
import { watchManifest } from '../src/persisted-queries/manifest.js';
import { openSharedState } from '../src/shared/shared-state.js';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** A logger at info whose lines the test reads back, parsed. */
function capturingLogger() {
  const lines: { level: number; msg: string; reason?: string }[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()));
      done();
    },
  });
  return { lines, logger: pino({ level: 'info' }, sink) };
}

describe('edge settings', () => {
  it('default to the limits of the design', () => {
    expect(loadGatewayConfig({})).toMatchObject({
      MAX_DEPTH: 7,
      MAX_COMPLEXITY: 5000,
      MAX_FIELDS: 2000,
      MAX_NESTING: 64,
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

  it('decide which subgraphs\' errors keep their message: by mode unset, the per-subgraph pairs over the global one', () => {
    const included = (env: Record<string, string>) => {
      const include = subgraphErrorInclusion(loadGatewayConfig(env));
      return ['users', 'catalog', 'inventory'].filter(include);
    };
    expect(included({})).toEqual(['users', 'catalog', 'inventory']);
    expect(included({ NODE_ENV: 'production' })).toEqual([]);
    expect(included({ NODE_ENV: 'production', INCLUDE_SUBGRAPH_ERRORS_BY_SUBGRAPH: ' users=true , catalog=false' })).toEqual(['users']);
    expect(included({ INCLUDE_SUBGRAPH_ERRORS: 'false', INCLUDE_SUBGRAPH_ERRORS_BY_SUBGRAPH: 'inventory=true' })).toEqual(['inventory']);
    expect(included({ INCLUDE_SUBGRAPH_ERRORS_BY_SUBGRAPH: 'catalog=false' })).toEqual(['users', 'inventory']);
    expect(() => loadGatewayConfig({ INCLUDE_SUBGRAPH_ERRORS: 'yes' })).toThrow(/INCLUDE_SUBGRAPH_ERRORS/);
    expect(() => loadGatewayConfig({ INCLUDE_SUBGRAPH_ERRORS_BY_SUBGRAPH: 'catalog=off' })).toThrow(/INCLUDE_SUBGRAPH_ERRORS_BY_SUBGRAPH: "catalog=off" is not subgraph=true\|false/);
  });

  it('read every SUBGRAPH_<NAME>_URL, matched to subgraphs by name as env names spell it', () => {
    const config = loadGatewayConfig({ SUBGRAPH_INVENTORY_URL: 'http://inventory:4010/graphql', SUBGRAPH_STOCK_LEVELS_URL: 'https://stock.internal/graphql' });
    expect(subgraphUrlOverrides(config, ['inventory', 'stock-levels', 'users'])).toEqual({
      inventory: 'http://inventory:4010/graphql',
      'stock-levels': 'https://stock.internal/graphql',
    });
    expect(() => loadGatewayConfig({ SUBGRAPH_USERS_URL: 'ftp://users/graphql' })).toThrow(/SUBGRAPH_USERS_URL: must be an http\(s\) URL/);
  });

  it('require a manifest in the audit and required modes (and allowlist, the former name of required)', () => {
    for (const mode of ['audit', 'required', 'allowlist']) {
      expect(() => loadGatewayConfig({ PERSISTED_QUERIES: mode })).toThrow(/PERSISTED_QUERIES_MANIFEST: must be set/);
    }
    expect(loadGatewayConfig({})).toMatchObject({ PERSISTED_QUERIES_MANIFEST_POLL_MS: 10_000, PERSISTED_QUERIES_ADMIN_BYPASS: 'on' });
  });

  it('keep the MCP door shut by default, and open it only on a manifest and a path of its own', () => {
    expect(loadGatewayConfig({})).toMatchObject({ MCP: 'off', MCP_PATH: '/mcp' });
    expect(() => loadGatewayConfig({ MCP: 'on' })).toThrow(/PERSISTED_QUERIES_MANIFEST: must be set when MCP=on/);
    expect(loadGatewayConfig({ MCP: 'on', PERSISTED_QUERIES_MANIFEST: 'manifest.json', MCP_PATH: '/agents/mcp' })).toMatchObject({ MCP: 'on', MCP_PATH: '/agents/mcp' });
    expect(() => loadGatewayConfig({ MCP_PATH: '/graphql' })).toThrow(/MCP_PATH: must not be one of/);
    expect(() => loadGatewayConfig({ MCP_PATH: 'mcp' })).toThrow(/MCP_PATH: must be a path/);
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

  const read = (path: string) => {
    const watched = watchManifest(path, 0, pino({ level: 'silent' }));
    watched.close();
    return watched.current();
  };

  it('maps each operation ID to its body, whatever the ID, and keeps the entries in order (a description too)', () => {
    const body = '{ products { id } }';
    const other = 'query Users { users { id } }';
    const entries = [
      { id: sha256(body), body, name: 'Products', type: 'query' },
      { id: 'web~1.2.0~users', body: other, description: 'Every user.' },
    ];
    const path = write('good.json', manifest(entries));
    expect(read(path)).toMatchObject({ byId: new Map([[sha256(body), body], ['web~1.2.0~users', other]]), bodies: new Set([body, other]), entries });
  });

  it('refuses a file in another format, an ID given two bodies, or a body that does not parse, naming the setting', () => {
    for (const [name, content, reason] of [
      ['not-json.json', '{', /JSON/],
      ['other-format.json', { format: 'something-else', version: 1, operations: [] }, /not an Apollo persisted-query manifest/],
      ['twice.json', manifest([{ id: 'a', body: '{ a }' }, { id: 'a', body: '{ b }' }]), /id "a" names two different bodies/],
      ['unparsable.json', manifest([{ id: 'broken', name: 'Broken', body: '{ products { id }' }]), /the body of Broken does not parse/],
    ] as const) {
      expect(() => read(write(name, content))).toThrow(ConfigError);
      expect(() => read(write(name, content))).toThrow(/PERSISTED_QUERIES_MANIFEST: cannot read/);
      expect(() => read(write(name, content))).toThrow(reason);
    }
  });
});

describe('the manifest, re-read while the gateway runs', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ordergraph-manifest-reload-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const manifest = (ids: string[]) =>
    JSON.stringify({ format: 'apollo-persisted-query-manifest', version: 1, operations: ids.map((id) => ({ id, body: `query ${id} { products { id } }` })) });

  /** As a deployment replaces it: whole, by a rename (a poll never reads half of it). */
  const replace = (path: string, content: string) => {
    writeFileSync(`${path}.tmp`, content);
    renameSync(`${path}.tmp`, path);
  };

  it('takes a new version, keeps the last good one through a bad or missing file, and logs each problem once', async () => {
    const path = join(dir, 'manifest.json');
    writeFileSync(path, manifest(['First']));
    const { lines, logger } = capturingLogger();
    const watched = watchManifest(path, 10, logger);
    const ids = () => [...watched.current().byId.keys()];
    const logged = (count: number) => vi.waitFor(() => expect(lines).toHaveLength(count));
    try {
      replace(path, manifest(['First', 'Second']));
      await logged(2);
      expect(ids()).toEqual(['First', 'Second']);
      writeFileSync(path, '{"format": "apollo-persisted-query-manifest"');
      await logged(3);
      expect(ids()).toEqual(['First', 'Second']);
      rmSync(path);
      await logged(4);
      expect(ids()).toEqual(['First', 'Second']);
      replace(path, manifest(['Third']));
      await logged(5);
      expect(ids()).toEqual(['Third']);
    } finally {
      watched.close();
    }
    expect(lines.map(({ level, msg }) => [level, msg])).toEqual([
      [30, 'persisted documents manifest loaded'],
      [30, 'persisted documents manifest reloaded'],
      [50, 'persisted documents manifest is invalid; keeping the previous one'],
      [50, 'persisted documents manifest is missing; keeping the previous one'],
      [30, 'persisted documents manifest reloaded'],
    ]);
  });
});

describe('without REDIS_URL', () => {
  it('announces the in-memory development fallback, as an error in production', async () => {
    for (const [production, level] of [[false, 40], [true, 50]] as const) {
      const { lines, logger } = capturingLogger();
      const state = openSharedState(undefined, logger, production);
      expect(state.redis).toBeUndefined();
      await state.close();
      expect(lines).toEqual([expect.objectContaining({ level, msg: expect.stringMatching(/No Redis is configured.*this process only/) })]);
    }
  });
});
