import { subgraphCodegen } from '../../packages/common/codegen.js';

export default subgraphCodegen({
  User: '../store/users.js#UserDoc',
  UserConnection: '../resolvers/UserConnection.js#UserConnectionModel',
  Order: '../search.js#Reference',
  Product: '../search.js#Reference',
});
