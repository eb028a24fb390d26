// The gateway's production entry as one bundle: `npm run build` compiles src/ with tsc, then this rewrites
// dist/index.js (tsc's entry) into a single minified module, with what the gateway loads only on demand (MCP, @defer,
// GraphiQL) in dist/chunks/. Node then holds one module where it held about two thousand, and their source text
// minified: the heap kept at rest, and so the old generation's peak, is that much lower (bench/README.md, Gateway memory).
// Run from the gateway's directory; `node scripts/bundle.ts` (Node.js strips the types).
import { rmSync } from 'node:fs';
import { build } from 'esbuild';

// Chunks are named by their content: those of an earlier build would stay beside the new ones.
rmSync('dist/chunks', { recursive: true, force: true });
await build({
  entryPoints: { index: 'dist/index.js' },
  outdir: 'dist',
  // The entry tsc wrote is replaced; the rest of dist/ stays what the package exports (gateway.js, config.js).
  allowOverwrite: true,
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  // A package's ES module build where it has one: what the bundle does not use of it is left out.
  mainFields: ['module', 'main'],
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node24',
  // Identifiers keep their names, so stack traces and logs still read.
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: 'external',
  // Beside the bundle, for profiles (bench/cpu-profile.ts maps their frames back to sources); Node.js reads it only
  // with --enable-source-maps.
  sourcemap: 'external',
  external: [
    // CommonJS (graphql 16 has no ES module Node.js loads), imported by most modules and called on every field: bundled,
    // each call from an ES module would go through esbuild's interop getter (a fifth more CPU per request in the
    // benchmark's (c)); Node.js's own import binds the functions themselves.
    'graphql',
    // A native addon, loaded from node_modules at run time.
    '@graphql-hive/router-query-planner',
    // Finds the repository's files (the default supergraph) relative to its own module.
    '@ordergraph/composition',
  ],
  // CommonJS dependencies call require(); an ES module has none of its own.
  banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
  logLevel: 'warning',
});

