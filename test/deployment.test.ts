// Independent deployment, checked statically (no Docker engine runs the tests): each deployable has its own Dockerfile
// that prunes the monorepo to its own workspace and matches its port, docker-compose.yml builds each from its own
// Dockerfile with health checks, and the CI example runs our checks and rover's against the same supergraph.yaml.
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
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

describe.each(deployables)('$service image', ({ service, dir, port }) => {
  const dockerfile = `${dir}/Dockerfile`;
  const text = existsSync(resolve(REPO_ROOT, dockerfile)) ? read(dockerfile) : '';
  const pkg = JSON.parse(read(`${dir}/package.json`)) as { name: string; scripts: Record<string, string> };

  it('has a Dockerfile of its own, built from the repository root by docker-compose.yml', () => {
    expect(text).not.toBe('');
    expect(compose.services[service]?.build).toEqual({ context: '.', dockerfile });
  });

  it('prunes to its workspace, builds it with turbo, drops dev dependencies and runs as non-root', () => {
    expect(text).toContain(`RUN npx --yes turbo@${rootPackage.devDependencies['turbo']} prune ${pkg.name} --docker`);
    expect(text).toContain('RUN npm ci');
    expect(text).toContain(`RUN npx turbo run build --filter=${pkg.name} && npm prune --omit=dev`);
    expect(text).toContain('USER node');
    expect(text).toContain(`WORKDIR /app/${dir}`);
    // The command the workspace itself declares for production.
    expect(pkg.scripts['start']).toBe('node dist/index.js');
    expect(text).toContain('CMD ["node", "dist/index.js"]');
  });

  it('listens on its default port and reports healthy once ready', () => {
    expect(text).toContain(`ENV NODE_ENV=production PORT=${port}`);
    expect(text).toContain(`EXPOSE ${port}`);
    expect(text).toMatch(/HEALTHCHECK [^\n]*\\\n\s+CMD \[.*\/readyz/);
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
