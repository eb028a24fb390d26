// The import rule of ARCHITECTURE.md, checked by dependency-cruiser (.dependency-cruiser.cjs) over the whole house,
// and shown to refuse each kind of import it forbids in a small house of its own.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '@ordergraph/composition';

const CONFIG = resolve(REPO_ROOT, '.dependency-cruiser.cjs');
const depcruise = resolve(REPO_ROOT, 'node_modules/dependency-cruiser/bin/dependency-cruiser.mjs');

interface Violation {
  from: string;
  to: string;
  rule: { name: string };
}

/** Cruises `paths` under `cwd` with the house's rules; the CLI exits non-zero on violations, which are the answer. */
function violations(cwd: string, paths: string[]): Violation[] {
  let output: string;
  try {
    output = execFileSync(process.execPath, [depcruise, '--config', CONFIG, '--output-type', 'json', ...paths], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 64 * 1024 * 1024 });
  } catch (error) {
    output = (error as { stdout: string }).stdout;
  }
  const result = JSON.parse(output) as { summary: { violations: Violation[]; totalCruised: number } };
  expect(result.summary.totalCruised).toBeGreaterThan(0);
  return result.summary.violations;
}

describe('what may import what', () => {
  it('holds across packages, applications, tests, e2e, bench and scripts', () => {
    expect(violations(REPO_ROOT, ['packages', 'services', 'gateway', 'testkit', 'e2e', 'test', 'bench', 'scripts'])).toEqual([]);
  }, 120_000);

  describe('refuses each import the rule forbids', () => {
    const house = mkdtempSync(join(tmpdir(), 'ordergraph-imports-'));
    afterAll(() => rmSync(house, { recursive: true, force: true }));
    const write = (path: string, text: string) => {
      mkdirSync(dirname(join(house, path)), { recursive: true });
      writeFileSync(join(house, path), text);
    };
    symlinkSync(resolve(REPO_ROOT, 'node_modules'), join(house, 'node_modules'), 'dir');
    write('tsconfig.json', JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext' } }));
    write('packages/core/src/index.ts', "import { MongoClient } from 'mongodb';\nimport { kit } from '../../subgraph-kit/src/index.js';\nexport const core = [MongoClient, kit];\n");
    write('packages/subgraph-kit/src/index.ts', "import { core } from '../../core/src/index.js';\nexport const kit = core;\n");
    write('packages/store/src/index.ts', "import { service } from '../../../services/orders/src/server.js';\nexport const store = service;\n");
    write('services/orders/src/server.ts', "import { gateway } from '../../../gateway/src/gateway.js';\nexport const service = gateway;\n");
    write('gateway/src/gateway.ts', "import { store } from '../../packages/store/src/index.js';\nexport const gateway = store;\n");
    write('gateway/src/paths.ts', "import { SUPERGRAPH_PATH } from '../../packages/composition/src/paths.js';\nimport { compose } from '../../packages/composition/src/supergraph.js';\nexport const paths = [SUPERGRAPH_PATH, compose];\n");
    write('packages/composition/src/paths.ts', 'export const SUPERGRAPH_PATH = 1;\n');
    write('packages/composition/src/supergraph.ts', 'export const compose = 1;\n');
    write('packages/seed/src/index.ts', "import { harness } from '../../../testkit/src/index.js';\nexport const seed = harness;\n");
    write('testkit/src/index.ts', 'export const harness = 1;\n');
    // Inside the gateway: a room reaching up a layer, and one reaching sideways.
    write('gateway/src/shared/state.ts', "import { http } from '../server/http.js';\nexport const state = http;\n");
    write('gateway/src/server/http.ts', 'export const http = 1;\n');
    write('gateway/src/caching/cache.ts', "import { mcp } from '../mcp/endpoint.js';\nexport const cache = mcp;\n");
    write('gateway/src/mcp/endpoint.ts', 'export const mcp = 1;\n');

    it('names every broken rule', () => {
      const found = violations(house, ['packages', 'services', 'gateway', 'testkit']).map((violation) => `${violation.rule.name}: ${violation.from} -> ${violation.to}`);
      expect(found).toEqual(
        expect.arrayContaining([
          'core-imports-no-package-of-ours: packages/core/src/index.ts -> packages/subgraph-kit/src/index.ts',
          expect.stringMatching(/^core-loads-no-server-or-driver: packages\/core\/src\/index.ts -> .*node_modules\/mongodb\/\S+$/),
          'store-imports-no-package-of-ours: packages/store/src/index.ts -> services/orders/src/server.ts',
          'no-package-imports-an-application: packages/store/src/index.ts -> services/orders/src/server.ts',
          'no-application-imports-another: services/orders/src/server.ts -> gateway/src/gateway.ts',
          'no-package-imports-an-application: packages/seed/src/index.ts -> testkit/src/index.ts',
          'gateway-loads-core-not-the-subgraph-kit-or-store: gateway/src/gateway.ts -> packages/store/src/index.ts',
          'by-package-name-not-by-path: gateway/src/gateway.ts -> packages/store/src/index.ts',
          'no-circular: packages/core/src/index.ts -> packages/subgraph-kit/src/index.ts',
          'gateway-loads-composition-paths-only: gateway/src/paths.ts -> packages/composition/src/supergraph.ts',
          'gateway-shared-imports-only-lower-rooms: gateway/src/shared/state.ts -> gateway/src/server/http.ts',
          'gateway-caching-imports-only-lower-rooms: gateway/src/caching/cache.ts -> gateway/src/mcp/endpoint.ts',
        ]),
      );
      expect(found.filter((line) => /^gateway-loads-composition-paths-only: .*\/composition\/src\/paths\.ts$/.test(line))).toEqual([]);
    }, 120_000);
  });
});

describe('what the gateway loads as it starts', () => {
  // Every module stays in the heap for the life of the process, and the old generation grows by half of what it holds
  // (bench/README.md, Gateway memory): the gateway loads neither the composition library (it needs only
  // @ordergraph/composition/paths) nor the MCP SDK, which mcp/endpoint.ts imports on the first MCP request. The rules
  // above see imports of our files only (dist folders are not cruised), so this looks at what Node.js resolves.
  it('is neither the composition library nor the MCP SDK', () => {
    const script = [
      "import { registerHooks } from 'node:module';",
      'const resolved = new Set();',
      'registerHooks({ resolve(specifier, context, next) { const result = next(specifier, context); resolved.add(result.url); return result; } });',
      // What gateway/src/index.ts imports before it serves.
      "await import('@ordergraph/gateway');",
      "await import('@ordergraph/gateway/config');",
      "await import('@ordergraph/gateway/supergraph-source');",
      "await import('@ordergraph/composition/paths');",
      'process.stdout.write(JSON.stringify([...resolved]));',
    ].join('\n');
    const output = execFileSync(process.execPath, ['--conditions=source', '--import', 'tsx', '--input-type=module', '--eval', script], { cwd: REPO_ROOT, encoding: 'utf8' });
    const resolved = JSON.parse(output) as string[];
    expect(resolved).toEqual(expect.arrayContaining([expect.stringMatching(/\/gateway\/src\/mcp\/endpoint\.ts$/), expect.stringMatching(/\/packages\/composition\/src\/paths\.ts$/)]));
    expect(resolved.filter((url) => url.includes('/@modelcontextprotocol/sdk/') || /\/packages\/composition\/src\/(?!paths\.ts$)/.test(url))).toEqual([]);
  }, 60_000);
});

describe('ARCHITECTURE.md', () => {
  const text = readFileSync(resolve(REPO_ROOT, 'ARCHITECTURE.md'), 'utf8');
  const tracked = execFileSync('git', ['ls-files'], { cwd: REPO_ROOT, encoding: 'utf8' }).split('\n').filter(Boolean);
  /** The folders of the repository at `depth` segments, as git knows them (so no node_modules, dist or scratch). */
  const foldersAt = (prefix: string) => [...new Set(tracked.filter((path) => path.startsWith(prefix) && path.slice(prefix.length).includes('/')).map((path) => path.slice(prefix.length).split('/')[0]!))];

  it('names every path it mentions as one that exists', () => {
    // Paths in backquotes and in the "Where to find things" table: `gateway/src/limits/`, `packages/store/`, ...
    const mentioned = [...text.matchAll(/`([\w.-]+\/[\w./-]*)`/g)].map((match) => match[1]!).filter((path) => !path.includes('<'));
    expect(mentioned.length).toBeGreaterThan(20);
    // The gateway's paragraph names its folders from gateway/src/ (`limits/`); every other path is from the root.
    const exists = (path: string) => existsSync(resolve(REPO_ROOT, path)) || existsSync(resolve(REPO_ROOT, 'gateway/src', path));
    expect(mentioned.filter((path) => !exists(path))).toEqual([]);
    const packages = [...text.matchAll(/@ordergraph\/([\w-]+)/g)].map((match) => match[1]!);
    const workspaces = [...foldersAt('packages/'), 'testkit', 'gateway'].map((folder) => JSON.parse(readFileSync(resolve(REPO_ROOT, folder === 'testkit' || folder === 'gateway' ? folder : `packages/${folder}`, 'package.json'), 'utf8')).name as string);
    expect(packages.filter((name) => !workspaces.includes(`@ordergraph/${name}`))).toEqual([]);
  });

  it('maps every top-level folder, every package and every gateway concern', () => {
    const unnamed = (folders: string[], prefix: string) => folders.filter((folder) => !text.includes(`${prefix}${folder}/`) && !text.includes(`\`${folder}/\``));
    expect(unnamed(foldersAt('').filter((folder) => !folder.startsWith('.')), '')).toEqual([]);
    expect(unnamed(foldersAt('packages/'), 'packages/')).toEqual([]);
    expect(unnamed(foldersAt('gateway/src/'), 'gateway/src/')).toEqual([]);
    expect(text).toMatch(/^## Where to find things$/m);
  });
});
