// What may import what (ARCHITECTURE.md): checked by dependency-cruiser in npm test (test/architecture.test.ts).
const APPS = '^(gateway|services/[^/]+)/';

/**
 * The gateway's rooms (gateway/src/<room>/, and config.ts), from the bottom up (ARCHITECTURE.md, "The gateway's
 * rooms"): a room imports only from rooms of lower layers, never from its own layer's others or from above. The
 * files at the top of gateway/src/ (gateway.ts, plugins.ts, index.ts, subgraph-urls.ts) stand above them all.
 */
const GATEWAY_LAYERS = [
  ['shared'],
  ['clients', 'subgraphs'],
  ['security'],
  ['execution'],
  ['limits', 'persisted-queries'],
  ['observability'],
  ['caching', 'subscriptions', 'mcp'],
  ['config.ts'],
  ['server'],
];
const roomPath = (room) => (room.endsWith('.ts') ? `gateway/src/${room.replace('.', '\\.')}$` : `gateway/src/${room}/`);
const TOP_FILES = 'gateway/src/(?!config\\.ts$)[^/]+\\.ts$';
const gatewayLayerRules = GATEWAY_LAYERS.flatMap((layer, at) =>
  layer.map((room) => {
    const higher = [...GATEWAY_LAYERS.slice(at + 1).flat(), ...layer.filter((other) => other !== room)].map(roomPath);
    return {
      name: `gateway-${room.replace('.ts', '')}-imports-only-lower-rooms`,
      comment: 'Inside the gateway, imports go down the layers of ARCHITECTURE.md only.',
      severity: 'error',
      from: { path: `^${roomPath(room)}` },
      to: { path: `^(${[...higher, TOP_FILES].join('|')})` },
    };
  }),
);
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    ...gatewayLayerRules,
    {
      name: 'not-to-unresolvable',
      comment: 'An import the checker cannot follow is an import it cannot judge.',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
    {
      name: 'no-circular',
      comment: 'Modules import each other in one direction.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'core-imports-no-package-of-ours',
      comment: 'Every process loads core: it leans on nothing else of ours.',
      severity: 'error',
      from: { path: '^packages/core/src/' },
      to: { path: '^(packages/(?!core/)|gateway/|services/)' },
    },
    {
      name: 'core-loads-no-server-or-driver',
      comment: 'The gateway loads core: no web framework, Apollo Server or MongoDB driver in it.',
      severity: 'error',
      from: { path: '^packages/core/src/' },
      to: { dependencyTypes: ['npm', 'npm-dev', 'npm-peer', 'npm-optional', 'npm-no-pkg', 'npm-unknown'], path: '(^|/)node_modules/(express|@apollo/server|@apollo/subgraph|@as-integrations/[^/]+|mongodb|mingo|bson)/' },
    },
    {
      name: 'store-imports-no-package-of-ours',
      severity: 'error',
      from: { path: '^packages/store/src/' },
      to: { path: '^(packages/(?!store/)|gateway/|services/)' },
    },
    {
      name: 'subgraph-kit-imports-core-and-store-only',
      severity: 'error',
      from: { path: '^packages/subgraph-kit/src/' },
      to: { path: '^(packages/(?!(subgraph-kit|core|store)/)|gateway/|services/)' },
    },
    {
      name: 'gateway-loads-core-not-the-subgraph-kit-or-store',
      comment: 'The gateway needs none of the subgraph server or the datastore.',
      severity: 'error',
      from: { path: '^gateway/src/' },
      to: { path: '^packages/(subgraph-kit|store|governance)/|^services/|^testkit/' },
    },
    {
      name: 'gateway-loads-composition-paths-only',
      comment: 'Of composition the gateway needs where files live (paths.ts), not the composition library, which it never runs: its code would stay in the heap for the life of the process (bench/README.md, Gateway memory; test/architecture.test.ts also checks what the gateway loads).',
      severity: 'error',
      from: { path: '^gateway/src/' },
      to: { path: '^packages/composition/src/(?!paths\\.ts$)' },
    },
    {
      name: 'no-package-imports-an-application',
      comment: 'Shared packages serve applications; the test kit, which starts them, stands above them (testkit/).',
      severity: 'error',
      from: { path: '^packages/[^/]+/src/' },
      to: { path: `${APPS}|^testkit/` },
    },
    {
      name: 'no-application-imports-another',
      severity: 'error',
      from: { path: '^(gateway|services/[^/]+)/src/' },
      to: { path: APPS, pathNot: '^$1/' },
    },
    {
      name: 'by-package-name-not-by-path',
      comment: "Another workspace's module is imported by its package name, so package.json declares the dependency.",
      severity: 'error',
      from: { path: '^(packages/[^/]+|services/[^/]+|gateway|testkit)/src/' },
      to: { dependencyTypes: ['local'], path: '^(packages/[^/]+|services/[^/]+|gateway|testkit)/', pathNot: '^$1/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // bench/out: what npm run bench writes (git-ignored), Grafbase's explorer bundle among it.
    exclude: { path: '(^|/)(dist|generated)/|^examples/client/src/gql/|^bench/out/' },
    // TypeScript 7 has no compiler API dependency-cruiser can use yet; swc parses the sources instead.
    parser: 'swc',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { conditionNames: ['source', 'import', 'require', 'node', 'default'], exportsFields: ['exports'] },
    combinedDependencies: false,
  },
};
