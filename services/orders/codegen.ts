import { subgraphCodegen } from '../../packages/subgraph-kit/codegen.js';

export default subgraphCodegen({
  Order: '../store/orders.js#OrderDoc',
  LineItem: '../store/orders.js#LineItemDoc',
  User: '../mappers.js#EntityReference',
  Product: '../mappers.js#EntityReference',
  OrderNotFound: '../mappers.js#OrderNotFoundMember',
  InsufficientPermissions: '../mappers.js#InsufficientPermissionsMember',
  InvalidOrderTransition: '../mappers.js#InvalidOrderTransitionMember',
});
