import { seedData } from '@ordergraph/seed';
import type { ProductDoc, ProductStore } from './store/products.js';

/** Seeds this subgraph's part of the shared deterministic data set; returns how many products were written. */
export function seedProducts(store: ProductStore): Promise<number> {
  const docs: ProductDoc[] = seedData().products.map((product) => ({
    _id: product.localId,
    name: product.name,
    nameLower: product.name.toLowerCase(),
    priceCents: product.priceCents,
    salePriceCents: null,
    description: product.description,
    imageUrl: null,
    attributesJson: null,
    createdAt: product.createdAt,
    updatedAt: product.createdAt,
    version: 0,
  }));
  return store.seed(docs);
}
