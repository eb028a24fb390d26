// Prices come from the catalog at order time, never from the client. The catalog is asked through its standard
// federation `_entities` field: one request for all products of an order, as the gateway itself would ask.
import { ErrorCode, type Logger } from '@ordergraph/core';
import { createPeer, type PeerSettings } from '@ordergraph/subgraph-kit';

export interface Catalog {
  /**
   * The current price in cents of each product (by global ID), in key order; null for a product the catalog does
   * not know. Throws SUBGRAPH_UNAVAILABLE when the catalog cannot answer.
   */
  currentPriceCents(productIds: readonly string[]): Promise<(number | null)[]>;
}

const CURRENT_PRICES = `query CurrentPrices($representations: [_Any!]!) { _entities(representations: $representations) { ... on Product { id currentPrice } } }`;

type Entities = { _entities?: ({ currentPrice?: unknown } | null)[] | null };

export function createCatalogClient(url: string, logger: Logger, settings: PeerSettings): Catalog {
  const catalog = createPeer({ name: 'catalog', url, logger, ...settings, unavailableMessage: 'The catalog is temporarily unavailable' });
  return {
    async currentPriceCents(productIds) {
      if (productIds.length === 0) return [];
      const representations = productIds.map((id) => ({ __typename: 'Product', id }));
      const body = await catalog.request<Entities>(CURRENT_PRICES, { representations });
      const entities = body.data?._entities;
      if (!Array.isArray(entities) || entities.length !== productIds.length) {
        throw catalog.unavailable({ errors: body.errors, reason: 'answered without entities' });
      }
      // An entity the catalog could not resolve is null with an error at its index. NOT_FOUND means the product
      // does not exist; any other error means the catalog failed, which is not the client's mistake.
      const failures = (body.errors ?? []).filter((error) => error.path?.[0] === '_entities');
      const broken = failures.find((error) => error.extensions?.code !== ErrorCode.NOT_FOUND);
      if (broken) throw catalog.unavailable({ error: broken, reason: 'failed to resolve a product' });
      return entities.map((entity) => {
        const price = entity?.currentPrice;
        // The catalog speaks major units as Float; orders keep integer cents.
        return typeof price === 'number' && Number.isFinite(price) ? Math.round(price * 100) : null;
      });
    },
  };
}
