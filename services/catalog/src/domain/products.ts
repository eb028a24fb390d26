// Product rules (what a valid product is) and every product write, compare-and-set so no concurrent update is lost.
import { amountToCents, badUserInput, conflict, declareInvalidation, localIdOf, notFound, requireAdmin, toGlobalId, type Viewer } from '@ordergraph/core';
import type { CreateProductInput, UpdateProductInput } from '../generated/graphql.js';
import { fieldsOf, type ProductDoc, type ProductFields, type ProductStore } from '../store/products.js';

const NAME_MAX_LENGTH = 200;
const DESCRIPTION_MAX_LENGTH = 2000;
/** Writes of one update before it gives up with CONFLICT; each lost attempt means another write succeeded. */
export const UPDATE_ATTEMPTS = 5;

function validName(name: string): string {
  const trimmed = name.trim();
  if (trimmed.length === 0 || trimmed.length > NAME_MAX_LENGTH) {
    throw badUserInput(`name must be 1 to ${NAME_MAX_LENGTH} characters`, { field: 'name' });
  }
  return trimmed;
}

function validDescription(description: string | null): string | null {
  if (description !== null && description.length > DESCRIPTION_MAX_LENGTH) {
    throw badUserInput(`description must be at most ${DESCRIPTION_MAX_LENGTH} characters`, { field: 'description' });
  }
  return description;
}

/** A field an update may leave out but not set to null. */
function notNull<T>(value: T | null, field: string): T {
  if (value === null) throw badUserInput(`${field} cannot be null`, { field });
  return value;
}

/** The rule that spans fields, checked on the product as it will be stored. */
function withValidSalePrice(fields: ProductFields): ProductFields {
  if (fields.salePriceCents !== null && fields.salePriceCents >= fields.priceCents) {
    throw badUserInput('salePrice must be below price', { field: 'salePrice' });
  }
  return fields;
}

const salePriceCents = (amount: number | null | undefined): number | null =>
  amount === null || amount === undefined ? null : amountToCents(amount, 'salePrice');

export function newProductFields(input: CreateProductInput): ProductFields {
  return withValidSalePrice({
    name: validName(input.name),
    priceCents: amountToCents(input.price, 'price'),
    salePriceCents: salePriceCents(input.salePrice),
    description: validDescription(input.description ?? null),
    imageUrl: input.imageUrl?.href ?? null,
    attributes: input.attributes ?? null,
  });
}

/** The product's next fields: `current` with what `input` sets (an absent field stays, a null one clears). */
function updatedProductFields(current: ProductDoc, input: UpdateProductInput): ProductFields {
  const next = fieldsOf(current);
  if (input.name !== undefined) next.name = validName(notNull(input.name, 'name'));
  if (input.price !== undefined) next.priceCents = amountToCents(notNull(input.price, 'price'), 'price');
  if (input.salePrice !== undefined) next.salePriceCents = salePriceCents(input.salePrice);
  if (input.description !== undefined) next.description = validDescription(input.description);
  if (input.imageUrl !== undefined) next.imageUrl = input.imageUrl?.href ?? null;
  if (input.attributes !== undefined) next.attributes = input.attributes;
  return withValidSalePrice(next);
}

/** What the product rules act on: the products collection. */
export interface ProductDomainDeps {
  store: ProductStore;
}

/** Tells the gateway's entity cache which product a committed write changed (a new one: the lists that may hold it). */
const invalidate = (product: ProductDoc): void =>
  declareInvalidation({ kind: 'entity', subgraph: 'catalog', type: 'Product', key: { id: toGlobalId('Product', product._id) } });

/** The product rules applied to the store: what resolvers call for every write. Administrators only. */
export function createProductDomain({ store }: ProductDomainDeps) {
  return {
    async create(viewer: Viewer, input: CreateProductInput): Promise<ProductDoc> {
      requireAdmin(viewer);
      const created = await store.create(newProductFields(input));
      invalidate(created);
      return created;
    },

    /**
     * Updates the product a global ID names: reads it, computes and validates the next state, and compare-and-sets it
     * on the version it read. A lost race re-reads and re-validates (the winner may have changed the price the sale
     * price is checked against); after UPDATE_ATTEMPTS lost races the caller gets CONFLICT.
     */
    async update(viewer: Viewer, id: string, input: UpdateProductInput): Promise<ProductDoc> {
      requireAdmin(viewer);
      const localId = localIdOf('Product', id);
      for (let attempt = 0; attempt < UPDATE_ATTEMPTS; attempt++) {
        // Straight from the store, not a loader: a retry must see the write that beat it.
        const current = localId === null ? null : await store.findById(localId);
        if (!current) throw notFound('Product', id);
        const updated = await store.update(current._id, current.version, updatedProductFields(current, input));
        if (updated) {
          invalidate(updated);
          return updated;
        }
      }
      throw conflict(`Product ${id} was changed concurrently too often; try again`);
    },
  };
}

export type ProductDomain = ReturnType<typeof createProductDomain>;
