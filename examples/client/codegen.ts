// Typed documents for the operations in src/operations, from the API schema `npm run schema:export` writes.
import type { CodegenConfig } from '@graphql-codegen/cli';

const config: CodegenConfig = {
  schema: '../../schemas/api.graphql',
  documents: ['src/operations/*.graphql'],
  generates: {
    'src/gql/': {
      preset: 'client',
      presetConfig: { fragmentMasking: false },
      config: { useTypeImports: true, emitLegacyCommonJSImports: false, enumsAsTypes: true, scalars: { DateTime: 'string', JSON: 'unknown', URL: 'string' } },
    },
  },
};
export default config;
