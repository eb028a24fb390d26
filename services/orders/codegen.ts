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
          Order: '../store/orders.js#OrderDoc',
          LineItem: '../store/orders.js#LineItemDoc',
          User: '../references.js#EntityReference',
          Product: '../references.js#EntityReference',
          OrderNotFound: '../resolvers/UpdateOrderResult.js#OrderNotFoundMember',
          InsufficientPermissions: '../resolvers/UpdateOrderResult.js#InsufficientPermissionsMember',
          InvalidOrderTransition: '../resolvers/UpdateOrderResult.js#InvalidOrderTransitionMember',
        },
        scalars: { DateTime: 'Date' },
      },
    },
  },
};

export default config;
