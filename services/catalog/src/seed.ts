import { batches, seedProducts as seededProducts } from '@ordergraph/seed';
import { searchWords } from '@ordergraph/subgraph-kit';
import type { ProductDoc, ProductStore } from './store/products.js';

/**
 * Seeds this subgraph's part of the shared deterministic data set at `scale` (SEED_SCALE), generated batch by batch;
 * returns how many products were written.
 */
export function seedProducts(store: ProductStore, scale = 1): Promise<number> {
  const docs = (function* (): Generator<ProductDoc> {
    for (const product of seededProducts(scale)) {
      yield {
        _id: product.localId,
        name: product.name,
        words: searchWords(product.name),
        priceCents: product.priceCents,
        salePriceCents: null,
        description: product.description,
        imageUrl: null,
        attributesJson: null,
        createdAt: product.createdAt,
        updatedAt: product.createdAt,
        version: 0,
      };
    }
  })();
  return store.seed(batches(docs));
}
