// Schema governance through the commands CI and teams run: `npm run compose` (stale file, composition failure),
// `npm run schema:check` against the committed baseline, a temporary one, a running subgraph and a running gateway,
// and `npm run schema:publish`, and the check against the operations clients send (a trusted-documents manifest or a
// folder of documents). Proposals are written to a temporary supergraph.yaml next to edited schema copies.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '@ordergraph/core';
import { createCatalogService } from '@ordergraph/catalog';
import { loadCatalogConfig } from '@ordergraph/catalog/config';
import { REPO_ROOT, SUPERGRAPH_PATH, readSupergraphConfig } from '@ordergraph/composition';
import { BASELINE_DIR, composeCommand, readBaselines, schemaCheckCommand, schemaPublishCommand } from '@ordergraph/governance';
import { startSupergraph } from '@ordergraph/testkit/e2e';

const tsx = resolve(REPO_ROOT, 'node_modules/.bin/tsx');
type Outcome = { code: number; stdout: string; stderr: string };

/** Runs one of the repository's scripts in its own process, as `npm run` does. */
async function runScript(script: string, ...args: string[]): Promise<Outcome> {
  try {
    const { stdout, stderr } = await promisify(execFile)(tsx, ['--conditions=source', resolve(REPO_ROOT, 'scripts', script), ...args], { cwd: REPO_ROOT });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

/** The report table's row for a change: schema, impact, kind, where, and the start of its details. */
const row = (...cells: string[]) => new RegExp(cells.map((cell) => `│ ${cell.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`).join('\\s+'));
const REMOVED_DESCRIPTION = ['BREAKING', 'Remove field', 'Product.description', "Field 'description' was removed from object type 'Product'"];

const COMMANDS = { 'compose.ts': composeCommand, 'schema-check.ts': schemaCheckCommand, 'schema-publish.ts': schemaPublishCommand };

/** What that script runs, in this process (each script only hands its command line and the console to it). */
async function run(script: keyof typeof COMMANDS, ...args: string[]): Promise<Outcome> {
  const outcome = { code: 0, stdout: '', stderr: '' };
  const out = { log: (text: string) => (outcome.stdout += `${text}\n`), error: (text: string) => (outcome.stderr += `${text}\n`) };
  outcome.code = await COMMANDS[script](args, out);
  return outcome;
}

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'ordergraph-governance-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let proposals = 0;
/** A copy of the subgraphs of supergraph.yaml with `edits` applied to their schemas; returns its supergraph.yaml. */
function proposal(edits: Partial<Record<string, [from: string, to: string]>>): string {
  const folder = join(dir, `proposal-${++proposals}`);
  rmSync(folder, { recursive: true, force: true });
  const entries = readSupergraphConfig().map(({ name, url, typeDefs }) => {
    const edit = edits[name];
    if (edit) expect(typeDefs).toContain(edit[0]);
    writeFileSync(join(dir, `${proposals}-${name}.graphql`), edit ? typeDefs.replace(edit[0], edit[1]) : typeDefs);
    return `  ${name}:\n    routing_url: ${url}\n    schema:\n      file: ./${proposals}-${name}.graphql`;
  });
  const config = join(dir, `supergraph-${proposals}.yaml`);
  writeFileSync(config, `federation_version: =2.14.4\nsubgraphs:\n${entries.join('\n')}\n`);
  return config;
}

const REMOVE_DESCRIPTION: [string, string] = ['  description: String\n', ''];
const ADD_AND_DEPRECATE: [string, string] = ['  description: String\n', '  description: String @deprecated(reason: "use summary")\n  summary: String\n'];

describe('npm run compose', () => {
  it('passes --check while the committed supergraph.graphql is what supergraph.yaml composes to', async () => {
    const { code, stdout } = await runScript('compose.ts', '--check');
    expect(stdout).toContain('supergraph.graphql is up to date');
    expect(code).toBe(0);
  });

  it('fails --check when the output is stale, and rewrites it without --check', async () => {
    const output = join(dir, 'supergraph.graphql');
    writeFileSync(output, readFileSync(SUPERGRAPH_PATH, 'utf8').replace('currentPrice', 'oldPrice'));
    const stale = await runScript('compose.ts', '--check', '--output', output);
    expect(stale.code).toBe(1);
    expect(stale.stderr).toContain('is stale: run npm run compose and commit the result');
    expect((await run('compose.ts', '--output', output)).code).toBe(0);
    expect(readFileSync(output, 'utf8')).toBe(readFileSync(SUPERGRAPH_PATH, 'utf8'));
  });

  it('fails with the composition errors when the subgraphs do not compose', async () => {
    // The catalog also resolving Order.total, which the orders subgraph owns and does not share.
    const config = proposal({ catalog: ['type Query {', 'type Order @key(fields: "id") { id: ID! total: Float! }\n\ntype Query {'] });
    const { code, stderr } = await run('compose.ts', '--check', '--config', config, '--output', join(dir, 'unused.graphql'));
    expect(code).toBe(1);
    expect(stderr).toMatch(/Composition failed:[\s\S]*Order\.total/);
  });
});

describe('npm run schema:check', () => {
  it('passes against the committed baseline (CI runs exactly this)', async () => {
    const { code, stdout } = await runScript('schema-check.ts');
    expect(stdout).toContain('Schema check against the baseline in schemas/baseline');
    expect(stdout).toContain('PASSED (exit 0): no breaking change.');
    expect(code).toBe(0);
  });

  it('fails a breaking proposal with a readable report', async () => {
    const { code, stdout } = await run('schema-check.ts', '--config', proposal({ catalog: REMOVE_DESCRIPTION }));
    expect(stdout).toContain('catalog: 1 change, 1 breaking');
    expect(stdout).toMatch(/┌─+┬[\s\S]*│ Schema\s+│ Impact\s+│ Change\s+│ Where\s+│ Details/);
    expect(stdout).toMatch(row('catalog', ...REMOVED_DESCRIPTION));
    expect(stdout).toContain('FAILED (exit 1): 1 breaking change.');
    expect(code).toBe(1);
  });

  it('fails when the proposal does not compose', async () => {
    const config = proposal({ catalog: ['type Query {', 'type Order @key(fields: "id") { id: ID! total: Float! }\n\ntype Query {'] });
    const { code, stdout } = await run('schema-check.ts', '--config', config);
    expect(stdout).toContain('Composition FAILED:');
    expect(code).toBe(1);
  });

  it('takes a subgraph baseline from its running deployment (_service { sdl })', async () => {
    const catalog = await createCatalogService(loadCatalogConfig({ LOG_LEVEL: 'silent' }), createLogger('catalog', 'silent'));
    try {
      const url = await catalog.listen(0, '127.0.0.1');
      const fine = await run('schema-check.ts', '--subgraph-url', `catalog=${url}`);
      expect(fine.stdout).toContain(`catalog at ${url}`);
      expect(fine.stdout).toContain('catalog: no changes');
      expect(fine.code).toBe(0);
      const breaking = await run('schema-check.ts', '--subgraph-url', `catalog=${url}`, '--config', proposal({ catalog: REMOVE_DESCRIPTION }));
      expect(breaking.stdout).toMatch(row('catalog', ...REMOVED_DESCRIPTION));
      expect(breaking.code).toBe(1);
    } finally {
      await catalog.stop();
    }
  });

  it('compares the composed API schema with a running gateway by introspection', async () => {
    const supergraph = await startSupergraph();
    try {
      const fine = await run('schema-check.ts', '--gateway', supergraph.url);
      expect(fine.stdout).toContain('API schema: no changes');
      expect(fine.code).toBe(0);
      const breaking = await run('schema-check.ts', '--gateway', supergraph.url, '--config', proposal({ catalog: REMOVE_DESCRIPTION }));
      expect(breaking.stdout).toMatch(row('API schema', ...REMOVED_DESCRIPTION));
      expect(breaking.code).toBe(1);
      // With the operations clients send: the removal breaks none of the example client's, so the flag lets it pass.
      const manifest = resolve(REPO_ROOT, 'examples/client/persisted-query-manifest.json');
      const unused = await run('schema-check.ts', '--gateway', supergraph.url, '--config', proposal({ catalog: REMOVE_DESCRIPTION }), '--operations', manifest, '--allow-unused-breaking');
      expect(unused.stdout).toContain('Known operations: 4 checked, 0 broken by this change.');
      expect(unused.code).toBe(0);
    } finally {
      await supergraph.stop();
    }
  });

  it('says so, with exit code 2, when a baseline cannot be fetched', async () => {
    const { code, stderr } = await run('schema-check.ts', '--subgraph-url', 'catalog=http://127.0.0.1:9/graphql');
    expect(stderr).toContain('schema check could not run (exit 2)');
    expect(code).toBe(2);
  });
});

describe('npm run schema:check with the operations clients send', () => {
  const EXAMPLE_MANIFEST = resolve(REPO_ROOT, 'examples/client/persisted-query-manifest.json');
  const ALLOW = '--allow-unused-breaking';
  /** A folder of .graphql documents, one file each. */
  function documents(name: string, files: Record<string, string>): string {
    const folder = join(dir, name);
    mkdirSync(join(folder, 'nested'), { recursive: true });
    for (const [file, body] of Object.entries(files)) writeFileSync(join(folder, file), body);
    return folder;
  }
  /** A trusted-documents manifest (Apollo's format; ids need not be hashes). */
  function manifest(name: string, operations: { id: string; name: string; body: string }[]): string {
    const path = join(dir, name);
    writeFileSync(path, JSON.stringify({ format: 'apollo-persisted-query-manifest', version: 1, operations: operations.map((operation) => ({ ...operation, type: 'query' })) }));
    return path;
  }
  const NAMES = { id: 'storefront~2.0.0~names', name: 'ProductNames', body: 'query ProductNames { products(limit: 2) { id name } }' };

  it('blocks a change that breaks a known operation, naming it and why, with or without the flag', async () => {
    const folder = documents('operations-with-description', {
      'details.graphql': 'query ProductDetails($id: ID!) { product(id: $id) { ...Described } }',
      'nested/fragments.graphql': 'fragment Described on Product { id description }',
      'names.graphql': NAMES.body,
    });
    const removal = proposal({ catalog: REMOVE_DESCRIPTION });
    for (const flags of [[], [ALLOW]]) {
      const { code, stdout } = await run('schema-check.ts', '--config', removal, '--operations', folder, ...flags);
      expect(stdout).toContain('Known operations: 2 checked, 1 broken by this change.');
      expect(stdout).toMatch(/^ {2}BROKEN: ProductDetails \(.*details\.graphql#ProductDetails\)\n {4}- Cannot query field "description" on type "Product"\.\n {4}- uses Product\.description: Field 'description' was removed from object type 'Product'$/m);
      expect(stdout).not.toContain('ProductNames');
      expect(stdout).toContain('FAILED (exit 1): 1 breaking change, 1 of 2 known operations broken. A change that breaks a known operation blocks deployment.');
      expect(code).toBe(1);
    }
  });

  it('passes a statically breaking change no known operation uses with --allow-unused-breaking, and only with it', async () => {
    const operations = manifest('names-manifest.json', [NAMES]);
    const removal = proposal({ catalog: REMOVE_DESCRIPTION });
    const blocked = await run('schema-check.ts', '--config', removal, '--operations', operations);
    expect(blocked.stdout).toMatch(row('catalog', ...REMOVED_DESCRIPTION));
    expect(blocked.stdout).toContain('Known operations: 1 checked, 0 broken by this change.');
    expect(blocked.stdout).toContain('FAILED (exit 1): 1 breaking change, 0 of 1 known operation broken. Breaking changes block deployment. No known operation uses what breaks: --allow-unused-breaking would let it pass.');
    expect(blocked.code).toBe(1);

    const passed = await run('schema-check.ts', '--config', removal, '--operations', operations, ALLOW);
    expect(passed.stdout).toMatch(row('catalog', ...REMOVED_DESCRIPTION));
    expect(passed.stdout).toContain('PASSED (exit 0): 1 breaking change, but none of the 1 known operation uses what breaks (--allow-unused-breaking).');
    expect(passed.code).toBe(0);
  });

  it('counts an operation that still validates but reads a field whose type changed as broken (the example client’s manifest)', async () => {
    const retyped = proposal({ catalog: ['  currentPrice: Float! @cacheControl', '  currentPrice: String! @cacheControl'] });
    const { code, stdout } = await run('schema-check.ts', '--config', retyped, '--operations', EXAMPLE_MANIFEST, ALLOW);
    // Still valid against the proposed schema (a leaf stays a leaf), yet the client reads a number that is now a string.
    expect(stdout).toMatch(/^ {2}BROKEN: Products \([0-9a-f]{64}\)\n {4}- uses Product\.currentPrice: Field 'Product\.currentPrice' changed type from 'Float!' to 'String!'$/m);
    expect(stdout).toMatch(/FAILED \(exit 1\): 1 breaking change, [1-9] of 4 known operations broken/);
    expect(code).toBe(1);
  });

  it('names, for each breaking change, the clients whose operations it affects: by clientName, or a folder per client', async () => {
    const described = 'query ProductDescriptions { products(limit: 2) { id description } }';
    const web = join(dir, 'web-manifest.json');
    writeFileSync(
      web,
      JSON.stringify({
        format: 'apollo-persisted-query-manifest',
        version: 1,
        operations: [
          { id: 'described', name: 'ProductDescriptions', type: 'query', body: described, clientName: 'web' },
          { id: 'names', name: 'ProductNames', type: 'query', body: NAMES.body, clientName: 'android' },
        ],
      }),
    );
    const perClient = join(dir, 'operations-by-client');
    mkdirSync(join(perClient, 'ios'), { recursive: true });
    writeFileSync(join(perClient, 'ios', 'details.graphql'), 'query Details($id: ID!) { product(id: $id) { name description } }');
    const { code, stdout } = await run('schema-check.ts', '--config', proposal({ catalog: REMOVE_DESCRIPTION }), '--operations', web, '--operations-by-client', perClient);
    expect(stdout).toContain('Known operations: 3 checked, 2 broken by this change.');
    expect(stdout).toMatch(/^ {2}BROKEN: ProductDescriptions \(described\) \[clients: web\]$/m);
    expect(stdout).toMatch(/^ {2}BROKEN: Details \(.*details\.graphql#Details\) \[clients: ios\]$/m);
    expect(stdout).toMatch(/^Clients affected, by breaking change:\n {2}Product\.description \(Remove field\): ios, web \(2 operations\)$/m);
    expect(stdout).not.toMatch(/android/);
    expect(code).toBe(1);
  });

  it('refuses the flag without operations, and operations it cannot read, with exit code 2', async () => {
    const otherFormat = join(dir, 'other-format.json');
    writeFileSync(otherFormat, JSON.stringify({ format: 'something', operations: [] }));
    const cases: [string[], string][] = [
      [[ALLOW], '--allow-unused-breaking needs the operations clients send'],
      [['--operations', join(dir, 'missing')], 'does not exist'],
      [['--operations', otherFormat], 'is not an Apollo persisted-query manifest'],
    ];
    for (const [args, message] of cases) {
      const { code, stderr } = await run('schema-check.ts', ...args);
      expect(stderr).toContain('schema check could not run (exit 2)');
      expect(stderr).toContain(message);
      expect(code).toBe(2);
    }
    const anonymous = documents('anonymous-operations', { 'anonymous.graphql': '{ products(limit: 1) { id } }' });
    expect((await run('schema-check.ts', '--operations', anonymous)).stderr).toContain('every operation needs a name');
  });
});

describe('npm run schema:publish', () => {
  it('moves the baseline at release: deprecate, publish, then the removal passes', async () => {
    const baseline = join(dir, 'baseline');
    expect((await run('schema-publish.ts', '--baseline', baseline)).code).toBe(0);
    expect(readBaselines(baseline)).toEqual(readBaselines(BASELINE_DIR));

    // Removing an undeprecated field is refused, by the check and by publish.
    expect((await run('schema-check.ts', '--baseline', baseline, '--config', proposal({ catalog: REMOVE_DESCRIPTION }))).code).toBe(1);
    const refused = await run('schema-publish.ts', '--baseline', baseline, '--config', proposal({ catalog: REMOVE_DESCRIPTION }));
    expect(refused.stderr).toContain('Not published. Publish a deliberate break with --allow-breaking.');
    expect(refused.code).toBe(1);

    // Release N deprecates it (and adds its replacement) ...
    const deprecated = proposal({ catalog: ADD_AND_DEPRECATE });
    expect((await run('schema-check.ts', '--baseline', baseline, '--config', deprecated)).code).toBe(0);
    expect((await run('schema-publish.ts', '--baseline', baseline, '--config', deprecated)).code).toBe(0);
    // ... so release N+1 may remove it.
    const removed = proposal({ catalog: [ADD_AND_DEPRECATE[0], '  summary: String\n'] });
    const check = await run('schema-check.ts', '--baseline', baseline, '--config', removed);
    expect(check.stdout).toMatch(row('catalog', 'ok', 'Remove deprecated field', 'Product.description'));
    expect(check.code).toBe(0);
  });

  it('publishes a deliberate break with --allow-breaking', async () => {
    const baseline = join(dir, 'baseline-break');
    expect((await runScript('schema-publish.ts', '--baseline', baseline)).code).toBe(0);
    const published = await run('schema-publish.ts', '--baseline', baseline, '--allow-breaking', '--config', proposal({ catalog: REMOVE_DESCRIPTION }));
    expect(published.stdout).toContain('Published users, orders, catalog');
    expect(published.code).toBe(0);
    expect(readBaselines(baseline)['catalog']).not.toMatch(/type Product [^}]*\bdescription:/);
  });
});
