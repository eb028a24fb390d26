import { subgraphCodegen } from '../../packages/subgraph-kit/codegen.js';

export default subgraphCodegen({
  User: '../store/users.js#UserDoc',
  UserConnection: '../mappers.js#UserConnectionModel',
  Order: '../mappers.js#Reference',
  Product: '../mappers.js#Reference',
});
