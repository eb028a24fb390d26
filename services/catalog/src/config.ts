import { z } from 'zod';
import { loadConfig, subgraphEnvSchema } from '@ordergraph/core';

export const catalogEnvSchema = subgraphEnvSchema({ port: 4003, database: 'ordergraph_catalog' });

export type CatalogConfig = z.output<typeof catalogEnvSchema>;

export const loadCatalogConfig = (env: NodeJS.ProcessEnv = process.env): CatalogConfig => loadConfig(catalogEnvSchema, env);
