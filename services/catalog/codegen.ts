import { subgraphCodegen } from '../../packages/common/codegen.js';

export default subgraphCodegen({
  Product: '../store/products.js#ProductDoc',
});
