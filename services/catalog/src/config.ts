import { loadConfig, subgraphEnvSchema } from '@ordergraph/core';

export const catalogEnvSchema = subgraphEnvSchema({ port: 4003, database: 'ordergraph_catalog' });

// Typed through the schema's own parse, so this package needs no direct zod dependency.
export type CatalogConfig = ReturnType<typeof catalogEnvSchema.parse>;

export const loadCatalogConfig = (env: NodeJS.ProcessEnv = process.env): CatalogConfig => loadConfig(catalogEnvSchema, env);
