import { centsToAmount } from '@ordergraph/core';
import type { LineItemResolvers } from '../generated/graphql.js';

export const LineItem: LineItemResolvers = {
  // A reference: the catalog resolves the product's fields.
  product: (item) => ({ id: item.productId }),
  quantity: (item) => item.quantity,
  unitPrice: (item) => centsToAmount(item.unitPriceCents),
  subtotal: (item) => centsToAmount(item.quantity * item.unitPriceCents),
};
