// Generated files are committed, so they must match their sources: the supergraph composed from supergraph.yaml, the
// API schema clients generate from, each subgraph's resolver types, the subgraph lists of the deployment files, and
// the client example's typed documents and persisted-query manifest.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { generatePersistedQueryManifest } from '@apollo/generate-persisted-query-manifest';
import { API_SCHEMA_PATH, REPO_ROOT, SUPERGRAPH_PATH, compose, composeSupergraph, readSupergraphConfig } from '@ordergraph/composition';
import { deploymentFiles } from '../scripts/deployment-files.js';

const run = promisify(execFile);

describe('generated files are fresh', () => {
  it('supergraph.graphql is what npm run compose writes', () => {
    expect(readFileSync(SUPERGRAPH_PATH, 'utf8')).toBe(composeSupergraph(readSupergraphConfig()));
  });

  it('schemas/api.graphql is what npm run schema:export writes', () => {
    expect(readFileSync(API_SCHEMA_PATH, 'utf8')).toBe(compose(readSupergraphConfig()).publicSdl);
  });

  it.each(['services/users', 'services/orders', 'services/catalog', 'examples/client'])('the generated types of %s match the schema', async (workspace) => {
    const cwd = resolve(REPO_ROOT, workspace);
    const bin = resolve(REPO_ROOT, 'node_modules/.bin/graphql-codegen');
    // --check exits non-zero when the generated file differs from what the schema produces.
    await expect(run(bin, ['--config', 'codegen.ts', '--check'], { cwd })).resolves.toBeDefined();
  }, 60_000);

  it('docker-compose.yml and the Helm chart\'s values list the subgraphs as npm run deploy:generate writes them', async () => {
    const files = await deploymentFiles();
    expect(files).toHaveLength(2);
    for (const { path, text } of files) expect(readFileSync(path, 'utf8'), path).toBe(text);
  });

  it('the client example\'s manifest is what npm run manifest builds from its documents', async () => {
    const manifest = await generatePersistedQueryManifest({ documents: [resolve(REPO_ROOT, 'examples/client/src/operations/*.graphql')] }, undefined);
    expect(JSON.parse(readFileSync(resolve(REPO_ROOT, 'examples/client/persisted-query-manifest.json'), 'utf8'))).toEqual(manifest);
  });
});

describe('the API schema export', () => {
  it('keeps deprecations and leaves out federation machinery and @inaccessible elements', () => {
    const typeDefs = `extend schema @link(url: "https://specs.apollo.dev/federation/v2.9", import: ["@key", "@inaccessible"])
      type Query { item(id: ID!): Item }
      type Item @key(fields: "id") { id: ID! name: String @deprecated(reason: "Use title.") title: String internal: String @inaccessible }`;
    const { publicSdl } = compose([{ name: 'items', url: 'http://localhost:1/graphql', schemaPath: 'items.graphql', typeDefs }]);
    expect(publicSdl).toContain('name: String @deprecated(reason: "Use title.")');
    expect(publicSdl).not.toMatch(/internal|join__|link__|@key|_Entity|_Service|_entities/);
  });
});
