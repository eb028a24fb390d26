import { subgraphCodegen } from '../../packages/subgraph-kit/codegen.js';

export default subgraphCodegen({
  Product: '../store/products.js#ProductDoc',
});
