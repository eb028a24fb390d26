import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

// Resolve graphql the way Node does (its CommonJS entry), so source under test and the libraries it hands errors and
// schemas to share one graphql module; vite would otherwise pick graphql's .mjs build and create a second realm.
const graphqlEntry = createRequire(import.meta.url).resolve('graphql');

export default defineConfig({
  resolve: { conditions: ['source'], alias: [{ find: /^graphql$/, replacement: graphqlEntry }] },
  ssr: { resolve: { conditions: ['source'] } },
  test: {
    include: ['test/**/*.test.ts', 'packages/*/test/**/*.test.ts', 'services/*/test/**/*.test.ts', 'gateway/test/**/*.test.ts', 'testkit/test/**/*.test.ts', 'e2e/**/*.test.ts'],
    environment: 'node',
    // eventsource-parser (the MCP SDK's client reads event streams with it) publishes its TypeScript under the `source`
    // condition, which Node cannot load from node_modules: vite loads it, and the SDK's client that imports it, instead.
    server: { deps: { inline: [/@modelcontextprotocol\/sdk\/dist\/esm\/client\//, 'eventsource-parser'] } },
    reporters: ['default', './scripts/summary-reporter.ts'],
    pool: 'forks',
    // Memory tests force a full collection (global.gc) before they read the heap.
    execArgv: ['--expose-gc'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Suites boot real servers on free ports; two cores run two files at a time comfortably.
    maxWorkers: 2,
  },
});
