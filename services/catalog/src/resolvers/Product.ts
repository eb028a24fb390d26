import { centsToAmount, localIdOf, notFound, toGlobalId } from '@ordergraph/core';
import type { Context } from '../context.js';
import type { ProductResolvers } from '../generated/graphql.js';
import { attributesOf, type ProductDoc } from '../store/products.js';

/** The one way to read a product by global ID (open to everyone); NOT_FOUND for a malformed or unknown ID. */
export async function readProduct(id: string, ctx: Context): Promise<ProductDoc> {
  const localId = localIdOf('Product', id);
  const doc = localId === null ? null : await ctx.loaders.product.load(localId);
  if (!doc) throw notFound('Product', id);
  return doc;
}

export const Product: ProductResolvers = {
  // Through the loader: the gateway's batch of representations becomes one store query.
  __resolveReference: (reference, ctx) => readProduct(reference.id, ctx),
  id: (product) => toGlobalId('Product', product._id),
  name: (product) => product.name,
  price: (product) => centsToAmount(product.priceCents),
  currentPrice: (product) => centsToAmount(product.salePriceCents ?? product.priceCents),
  description: (product) => product.description,
  imageUrl: (product) => (product.imageUrl === null ? null : new URL(product.imageUrl)),
  attributes: (product) => attributesOf(product),
  createdAt: (product) => product.createdAt,
  updatedAt: (product) => product.updatedAt,
};
