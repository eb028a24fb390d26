import type { CodegenConfig } from '@graphql-codegen/cli';

const config: CodegenConfig = {
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
        mappers: {
          Product: '../store/products.js#ProductDoc',
        },
        scalars: { DateTime: 'Date', JSON: 'unknown', URL: 'URL' },
      },
    },
  },
};

export default config;
