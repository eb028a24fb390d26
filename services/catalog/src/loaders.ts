import DataLoader from 'dataloader';
import type { ProductDoc, ProductStore } from './store/products.js';

/** One DataLoader per entity, built per request; keys are local ids. */
export function createLoaders(store: ProductStore) {
  return {
    product: new DataLoader<string, ProductDoc | null>((ids) => store.findByIds(ids)),
  };
}

export type Loaders = ReturnType<typeof createLoaders>;
