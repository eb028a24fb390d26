import { subgraphCodegen } from '../../packages/common/codegen.js';

export default subgraphCodegen({
  Order: '../store/orders.js#OrderDoc',
  LineItem: '../store/orders.js#LineItemDoc',
  User: '../references.js#EntityReference',
  Product: '../references.js#EntityReference',
  OrderNotFound: '../resolvers/UpdateOrderResult.js#OrderNotFoundMember',
  InsufficientPermissions: '../resolvers/UpdateOrderResult.js#InsufficientPermissionsMember',
  InvalidOrderTransition: '../resolvers/UpdateOrderResult.js#InvalidOrderTransitionMember',
});
