// The parts of docker-compose.yml and of the Helm chart's values that list subgraphs, generated from supergraph.yaml
// and each subgraph's settings; `npm run deploy:generate` writes them, test/generated.test.ts checks they are fresh.
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { REPO_ROOT, envNameOf, subgraphUrlVariable } from '@ordergraph/composition';
import { loadGatewayConfig } from '@ordergraph/gateway/config';
import { subgraphModules } from './subgraph-modules.js';

export const COMPOSE_FILE = resolve(REPO_ROOT, 'docker-compose.yml');
export const HELM_VALUES = resolve(REPO_ROOT, 'deploy/helm/ordergraph/values.yaml');

const START = 'generated:start (npm run deploy:generate writes this part from supergraph.yaml and the subgraphs\' settings; do not edit)';
const END = 'generated:end';

/** One subgraph as the deployment files need it. */
export interface DeployedSubgraph {
  name: string;
  /** Its workspace's package name and folder (relative to supergraph.yaml): the image's build arguments. */
  workspace: string;
  dir: string;
  /** The port of its routing URL in supergraph.yaml. */
  port: number;
  /** The other subgraphs it calls: those whose <NAME>_URL its settings have. */
  peers: string[];
  /** Whether its settings have REDIS_URL. */
  redis: boolean;
  /** The Node.js flags of its start script (the image's NODE_FLAGS). */
  flags: string[];
}

const packageJson = (dir: string) => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name: string; scripts?: { start?: string } };
const packageName = (dir: string) => packageJson(dir).name;

/**
 * What every image sets in its environment besides NODE_FLAGS (the Dockerfile's runtime stage installs libjemalloc2):
 * node allocates with jemalloc, which gives back what its threads free where glibc's malloc keeps it in per-thread
 * arenas, and gives back pages freed a second ago rather than ten (bench/README.md, Gateway memory). A library name without a
 * slash: the loader finds it on any architecture.
 */
export const IMAGE_ENV = { LD_PRELOAD: 'libjemalloc.so.2', MALLOC_CONF: 'dirty_decay_ms:1000' } as const;

/**
 * The Node.js flags a deployable runs with: those of its package.json `start` script (`node <flags> dist/index.js`;
 * none without one), the one place they are set. The image gets them as its NODE_FLAGS build argument
 * (docker-compose.yml, from here); the benchmarks start the built entry with them. Most are not allowed in
 * NODE_OPTIONS, hence a variable of our own.
 */
export function startFlags(dir: string): string[] {
  const start = packageJson(resolve(REPO_ROOT, dir)).scripts?.start;
  if (start === undefined) return [];
  const flags = /^node ((?:--[\w-]+(?:=\S+)? )*)dist\/index\.js$/.exec(start);
  if (!flags) throw new Error(`${dir}/package.json: the start script must be "node [--flag[=value] ...] dist/index.js", not "${start}"`);
  return flags[1]!.split(' ').filter(Boolean);
}

/** The subgraphs `config` lists, each read from its folder: the package.json and the settings of its server module. */
export async function deployedSubgraphs(config = resolve(REPO_ROOT, 'supergraph.yaml')): Promise<DeployedSubgraph[]> {
  const modules = await subgraphModules(config);
  const names = modules.map(({ source }) => source.name);
  return modules.map(({ source: { name, url, schemaPath }, subgraph }) => {
    const settings = Object.keys(subgraph.envSchema.shape);
    const folder = dirname(dirname(schemaPath));
    return {
      name,
      workspace: packageName(folder),
      dir: relative(dirname(config), folder),
      port: Number(new URL(url).port),
      peers: names.filter((peer) => peer !== name && settings.includes(`${envNameOf(peer)}_URL`)),
      redis: settings.includes('REDIS_URL'),
      flags: startFlags(folder),
    };
  });
}

/** docker-compose.yml's services for the subgraphs and the gateway, each on the compose network by its name. */
export function composeServices(subgraphs: DeployedSubgraph[]): string {
  const healthy = '{ condition: service_healthy }';
  const urlOf = (name: string) => `http://${name}:${subgraphs.find((subgraph) => subgraph.name === name)!.port}/graphql`;
  const build = (workspace: string, dir: string, port: number, flags: string[]) =>
    `    build: { context: ., args: { WORKSPACE: '${workspace}', WORKSPACE_DIR: ${dir}, PORT: ${port}${flags.length ? `, NODE_FLAGS: '${flags.join(' ')}'` : ''} } }`;
  const services = subgraphs.map((subgraph) => [
    `  ${subgraph.name}:`,
    '    <<: *service',
    build(subgraph.workspace, subgraph.dir, subgraph.port, subgraph.flags),
    '    environment:',
    '      <<: *env',
    '      MONGO_URL: mongodb://mongo:27017',
    '      SEED: "true"',
    ...subgraph.peers.map((peer) => `      ${envNameOf(peer)}_URL: ${urlOf(peer)}`),
    `    depends_on: { mongo: ${healthy}${subgraph.redis ? `, redis: ${healthy}` : ''} }`,
  ]);
  const port = loadGatewayConfig({}).PORT;
  const gateway = [
    '',
    '  gateway:',
    '    <<: *service',
    build(packageName(resolve(REPO_ROOT, 'gateway')), 'gateway', port, startFlags('gateway')),
    '    environment:',
    '      <<: *env',
    '      # The repository\'s supergraph.graphql, mounted as a directory: `npm run compose` replaces the file by renaming a',
    '      # new one over it, which a single-file bind mount would not follow.',
    '      SUPERGRAPH_PATH: /srv/supergraph/supergraph.graphql',
    ...subgraphs.map((subgraph) => `      ${subgraphUrlVariable(subgraph.name)}: ${urlOf(subgraph.name)}`),
    '    volumes: ["./:/srv/supergraph:ro"]',
    `    ports: ["${port}:${port}"]`,
    '    depends_on:',
    ...subgraphs.map((subgraph) => `      ${subgraph.name}: ${healthy}`),
  ];
  return [...services.flat(), ...gateway].join('\n');
}

/** The Helm chart's `subgraphs` values: one entry per subgraph, which its templates range over. */
export function helmSubgraphValues(subgraphs: DeployedSubgraph[]): string {
  return [
    '# One entry per subgraph: peers are the subgraphs it calls (each told as <NAME>_URL), redis whether it uses Redis.',
    '# Set replicas, env and resources per release (--set subgraphs.<name>.replicas=3, or a values file).',
    'subgraphs:',
    ...subgraphs.flatMap((subgraph) => [
      `  ${subgraph.name}:`,
      '    replicas: 2',
      `    port: ${subgraph.port}`,
      `    peers: [${subgraph.peers.join(', ')}]`,
      `    redis: ${subgraph.redis}`,
      '    env: {}',
      '    resources:',
      '      requests: { cpu: 100m, memory: 192Mi }',
      '      limits: { cpu: 500m, memory: 384Mi }',
    ]),
  ].join('\n');
}

/** `text` with the lines between its generated markers (YAML comments indented by `indent`) replaced by `body`. */
export function withGenerated(text: string, body: string, indent = ''): string {
  const start = `${indent}# ${START}\n`;
  const end = `${indent}# ${END}\n`;
  const [before, rest] = text.split(start);
  const after = rest?.split(end)[1];
  if (before === undefined || after === undefined) throw new Error(`no "# ${START}" ... "# ${END}" lines`);
  return `${before}${start}${body}\n${end}${after}`;
}

/** Each file with its generated part as `subgraphs` make it. */
export async function deploymentFiles(subgraphs?: DeployedSubgraph[]): Promise<{ path: string; text: string }[]> {
  const listed = subgraphs ?? (await deployedSubgraphs());
  return [
    { path: COMPOSE_FILE, text: withGenerated(readFileSync(COMPOSE_FILE, 'utf8'), composeServices(listed), '  ') },
    { path: HELM_VALUES, text: withGenerated(readFileSync(HELM_VALUES, 'utf8'), helmSubgraphValues(listed)) },
  ];
}
