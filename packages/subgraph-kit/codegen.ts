// The graphql-codegen setup every subgraph shares: resolver types generated from src/schema.graphql into
// src/generated/graphql.ts, with the service's context type and mappers from GraphQL types to stored documents.
import type { CodegenConfig } from '@graphql-codegen/cli';

export function subgraphCodegen(mappers: Record<string, string>): CodegenConfig {
  return {
    schema: 'src/schema.graphql',
    generates: {
      'src/generated/graphql.ts': {
        plugins: ['typescript', 'typescript-resolvers'],
        config: {
          federation: true,
          useIndexSignature: true,
          useTypeImports: true,
          enumsAsTypes: true,
          contextType: '../context.js#Context',
          mappers,
          scalars: { DateTime: 'Date', JSON: 'unknown', URL: 'URL' },
        },
      },
    },
  };
}
