import { subgraphCodegen } from '../../packages/subgraph-kit/codegen.js';

export default subgraphCodegen({
  User: '../store/users.js#UserDoc',
  UserConnection: '../resolvers/UserConnection.js#UserConnectionModel',
  Order: '../domain/search.js#Reference',
  Product: '../domain/search.js#Reference',
});
