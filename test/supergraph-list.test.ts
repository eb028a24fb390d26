// supergraph.yaml is the one list of subgraphs: in a temporary copy, a fourth subgraph is one more entry there plus its
// own folder, and npm start, the gateway's settings, the deployment files and the test kit's supergraph pick it up.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml, parseAllDocuments, stringify as stringifyYaml } from 'yaml';
import { REPO_ROOT, readSubgraphNames } from '@ordergraph/composition';
import { loadGatewayConfig, subgraphUrlOverrides } from '@ordergraph/gateway/config';
import { toGlobalId } from '@ordergraph/core';
import { graphql } from '@ordergraph/testkit';
import { startSupergraph, type Supergraph } from '@ordergraph/testkit/e2e';
import { configReference } from '../scripts/config-reference.js';
import { COMPOSE_FILE, HELM_VALUES, composeServices, deployedSubgraphs, helmSubgraphValues, withGenerated } from '../scripts/deployment-files.js';
import { helm } from '../scripts/helm.js';
import { startPlan } from '../scripts/start-plan.js';

const copy = mkdtempSync(join(tmpdir(), 'ordergraph-fourth-'));
const config = join(copy, 'supergraph.yaml');
const REVIEWED = toGlobalId('Product', 'product-0000');

/** The fourth subgraph's folder, shaped like the other three: a schema, a server module exporting `subgraph`, index.ts. */
const REVIEWS = {
  'package.json': JSON.stringify({ name: '@ordergraph/reviews', version: '0.1.0', private: true, type: 'module' }),
  'src/schema.graphql': `extend schema @link(url: "https://specs.apollo.dev/federation/v2.7", import: ["@key"])

type Product @key(fields: "id") {
  id: ID!
  "Reviews written for the product."
  reviewCount: Int!
}
`,
  'src/server.ts': `import { readFileSync } from 'node:fs';
import { createLogger, loadConfig, subgraphEnvSchema } from '@ordergraph/core';
import { createSubgraphService, openSubgraphResources, type SubgraphModule } from '@ordergraph/subgraph-kit';

const schema = subgraphEnvSchema({ port: 4004, database: 'ordergraph_reviews' });
type ReviewsConfig = ReturnType<typeof schema.parse>;

export const subgraph: SubgraphModule<ReviewsConfig> = {
  envSchema: schema,
  loadConfig: (env = process.env) => loadConfig(schema, env),
  async create(config, logger = createLogger('reviews', config.LOG_LEVEL), deps = {}) {
    const resources = await openSubgraphResources('reviews', config, logger, deps.database);
    const reviews = await resources.db.collection<{ _id: string; productId: string }>('reviews', []);
    await reviews.insertMany([{ _id: 'r1', productId: '${REVIEWED}' }, { _id: 'r2', productId: '${REVIEWED}' }]);
    const resolvers = {
      Product: {
        __resolveReference: (product: { id: string }) => product,
        reviewCount: (product: { id: string }) => reviews.count({ productId: product.id }),
      },
    };
    const typeDefs = readFileSync(new URL('./schema.graphql', import.meta.url), 'utf8');
    return createSubgraphService({ name: 'reviews', typeDefs, resolvers, resources, createContext: () => ({}), logger });
  },
};
`,
  'src/index.ts': `import { createLogger, runProcess } from '@ordergraph/core';
import { subgraph } from './server.js';

const logger = createLogger('reviews');
runProcess(logger, async () => {
  const config = subgraph.loadConfig();
  const service = await subgraph.create(config, logger);
  await service.listen(config.PORT, config.HOST);
  return service;
});
`,
};

beforeAll(() => {
  // The repository's list, its schema paths made absolute, and one more entry.
  const list = parseYaml(readFileSync(resolve(REPO_ROOT, 'supergraph.yaml'), 'utf8')) as { subgraphs: Record<string, { routing_url: string; schema: { file: string } }> };
  for (const subgraph of Object.values(list.subgraphs)) subgraph.schema.file = resolve(REPO_ROOT, subgraph.schema.file);
  list.subgraphs['reviews'] = { routing_url: 'http://localhost:4004/graphql', schema: { file: './services/reviews/src/schema.graphql' } };
  writeFileSync(config, stringifyYaml(list));
  for (const [path, text] of Object.entries(REVIEWS)) {
    mkdirSync(join(copy, 'services/reviews', path, '..'), { recursive: true });
    writeFileSync(join(copy, 'services/reviews', path), text);
  }
  // The copy's modules resolve our packages as the repository's own do.
  symlinkSync(resolve(REPO_ROOT, 'node_modules'), join(copy, 'node_modules'), 'dir');
});
afterAll(() => rmSync(copy, { recursive: true, force: true }));

describe('a fourth subgraph: one entry in supergraph.yaml and its folder', () => {
  it('is in npm start: its own port, its URL told to every other process', () => {
    const plan = startPlan({}, config);
    const reviews = plan.subgraphs.find((launch) => launch.name === 'reviews');
    expect(reviews).toMatchObject({ port: 4004, entry: expect.stringMatching(/services\/reviews\/src\/index\.ts$/) });
    expect(reviews!.env).toEqual({ USERS_URL: 'http://127.0.0.1:4001/graphql', ORDERS_URL: 'http://127.0.0.1:4002/graphql', CATALOG_URL: 'http://127.0.0.1:4003/graphql' });
    for (const other of plan.subgraphs.filter((launch) => launch.name !== 'reviews')) expect(other.env['REVIEWS_URL']).toBe('http://127.0.0.1:4004/graphql');
    expect(plan.gateway.env['SUBGRAPH_REVIEWS_URL']).toBe('http://127.0.0.1:4004/graphql');
    expect(startPlan({ REVIEWS_PORT: '5004' }, config).subgraphs.find((launch) => launch.name === 'reviews')!.port).toBe(5004);
  });

  it('has its routing URL overridden on the gateway by SUBGRAPH_REVIEWS_URL, as the other three by theirs', () => {
    const subgraphs = readSubgraphNames(config);
    expect(subgraphs).toEqual(['users', 'orders', 'catalog', 'reviews']);
    // What npm start tells the gateway is a configuration it accepts, with an override for each of the four.
    const plan = startPlan({}, config);
    expect(subgraphUrlOverrides(loadGatewayConfig(plan.gateway.env), subgraphs)).toEqual({
      users: 'http://127.0.0.1:4001/graphql',
      orders: 'http://127.0.0.1:4002/graphql',
      catalog: 'http://127.0.0.1:4003/graphql',
      reviews: 'http://127.0.0.1:4004/graphql',
    });
    expect(() => loadGatewayConfig({ SUBGRAPH_REVIEWS_URL: 'not a URL' })).toThrow(/SUBGRAPH_REVIEWS_URL/);
    // The gateway reads the variable by the names of the supergraph it serves, not by a list of its own.
    expect(subgraphUrlOverrides(loadGatewayConfig(plan.gateway.env), ['users', 'orders', 'catalog'])).toEqual({
      users: 'http://127.0.0.1:4001/graphql',
      orders: 'http://127.0.0.1:4002/graphql',
      catalog: 'http://127.0.0.1:4003/graphql',
    });
  });

  it('is in docs/configuration.md\'s reference as npm run docs:config writes it: its section and port setting', async () => {
    const reference = await configReference(config);
    expect(reference).toContain('### Every subgraph (users, orders, catalog, reviews)');
    // One row for every subgraph's routing URL, by its pattern.
    expect(reference).toContain('| `SUBGRAPH_<NAME>_URL` | unset | URL |');
    expect(reference).not.toContain('SUBGRAPH_REVIEWS_URL');
    expect(reference).toContain('| `REVIEWS_PORT` | `4004` |');
  });

  it('is in docker-compose.yml and the Helm chart as npm run deploy:generate writes them, the gateway told its URL', async () => {
    const subgraphs = await deployedSubgraphs(config);
    expect(subgraphs.map((subgraph) => subgraph.name)).toEqual(['users', 'orders', 'catalog', 'reviews']);
    expect(subgraphs.at(-1)).toEqual({ name: 'reviews', workspace: '@ordergraph/reviews', dir: 'services/reviews', port: 4004, peers: [], redis: false, flags: [] });

    type Service = { build: { args: Record<string, unknown> }; environment: Record<string, unknown>; depends_on: Record<string, unknown> };
    const compose = parseYaml(withGenerated(readFileSync(COMPOSE_FILE, 'utf8'), composeServices(subgraphs), '  ')) as { services: Record<string, Service> };
    expect(compose.services['reviews']!.build.args).toEqual({ WORKSPACE: '@ordergraph/reviews', WORKSPACE_DIR: 'services/reviews', PORT: 4004 });
    expect(compose.services['gateway']!.environment['SUBGRAPH_REVIEWS_URL']).toBe('http://reviews:4004/graphql');
    expect(Object.keys(compose.services['gateway']!.depends_on)).toEqual(['users', 'orders', 'catalog', 'reviews']);

    const values = join(copy, 'values.yaml');
    writeFileSync(values, withGenerated(readFileSync(HELM_VALUES, 'utf8'), helmSubgraphValues(subgraphs)));
    const secrets = ['jwtSecret=a-production-secret-of-at-least-32-chars', 'subgraphSigningSecret=a-signing-secret-of-at-least-32-characters'];
    const mongoUrls = subgraphs.map((subgraph) => `mongoUrls.${subgraph.name}=mongodb://mongo-0.mongo:27017`);
    const args = [...secrets, ...mongoUrls].flatMap((setting) => ['--set', `secrets.${setting}`]);
    type Rendered = { kind: string; metadata: { name: string }; stringData?: Record<string, string>; spec?: { template: { spec: { containers: { env: { name: string; value?: string }[] }[] } } } };
    const objects = parseAllDocuments(helm(['template', 'og', 'deploy/helm/ordergraph', '-f', values, ...args]))
      .map((document) => document.toJS() as Rendered | null)
      .filter((object): object is Rendered => object !== null);
    const deployment = (name: string) => objects.find((object) => object.kind === 'Deployment' && object.metadata.name === name);
    expect(deployment('og-reviews')).toBeDefined();
    expect(objects.find((object) => object.kind === 'Service' && object.metadata.name === 'og-reviews')).toBeDefined();
    const gatewayEnv = deployment('og-gateway')!.spec!.template.spec.containers[0]!.env;
    expect(gatewayEnv.find((variable) => variable.name === 'SUBGRAPH_REVIEWS_URL')?.value).toBe('http://og-reviews:4004/graphql');
    expect(objects.find((object) => object.kind === 'Secret')!.stringData!['REVIEWS_MONGO_URL']).toBe('mongodb://mongo-0.mongo:27017');
  });

  describe('in the test kit’s supergraph', () => {
    let supergraph: Supergraph;
    beforeAll(async () => {
      supergraph = await startSupergraph({ config });
    }, 120_000);
    afterAll(() => supergraph?.stop());

    it('is started, composed and asked by the gateway beside the other three', async () => {
      expect(Object.keys(supergraph.subgraphs).sort()).toEqual(['catalog', 'orders', 'reviews', 'users']);
      const { body } = await graphql(supergraph.url, `{ products(limit: 2) { id name reviewCount } }`);
      expect(body.errors).toBeUndefined();
      const [first, second] = body.data!['products'] as { id: string; name: string; reviewCount: number }[];
      expect(first).toMatchObject({ id: REVIEWED, reviewCount: 2 });
      expect(first!.name).toEqual(expect.any(String));
      expect(second!.reviewCount).toBe(0);
      expect(await supergraph.storeCalls('reviews', { operation: 'count' })).toBe(2);
    });
  });
});
