// Prices come from the catalog at order time, never from the client. The catalog is asked through its standard
// federation `_entities` field: one request for all products of an order, as the gateway itself would ask.
import { GraphQLError } from 'graphql';
import { ErrorCode, forwardedRequestHeaders, type Logger } from '@ordergraph/common';

export interface Catalog {
  /**
   * The current price in cents of each product (by global ID), in key order; null for a product the catalog does
   * not know. Throws SUBGRAPH_UNAVAILABLE when the catalog cannot answer.
   */
  currentPriceCents(productIds: readonly string[]): Promise<(number | null)[]>;
}

const CURRENT_PRICES = `query CurrentPrices($representations: [_Any!]!) { _entities(representations: $representations) { ... on Product { id currentPrice } } }`;

interface EntitiesResponse {
  data?: { _entities?: ({ currentPrice?: unknown } | null)[] | null } | null;
  errors?: { path?: (string | number)[]; extensions?: { code?: unknown } }[];
}

function catalogUnavailable(): GraphQLError {
  return new GraphQLError('The catalog is temporarily unavailable', {
    extensions: { code: ErrorCode.SUBGRAPH_UNAVAILABLE, subgraph: 'catalog' },
  });
}

export function createCatalogClient(url: string, logger: Logger, timeoutMs = 5_000): Catalog {
  async function fetchEntities(productIds: readonly string[]): Promise<EntitiesResponse> {
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', ...forwardedRequestHeaders() },
        body: JSON.stringify({
          query: CURRENT_PRICES,
          variables: { representations: productIds.map((id) => ({ __typename: 'Product', id })) },
        }),
        signal: AbortSignal.timeout(timeoutMs),
      });
      return (await response.json()) as EntitiesResponse;
    } catch (error) {
      logger.error({ err: error, url }, 'catalog request failed');
      throw catalogUnavailable();
    }
  }

  return {
    async currentPriceCents(productIds) {
      if (productIds.length === 0) return [];
      const body = await fetchEntities(productIds);
      const entities = body.data?._entities;
      if (!Array.isArray(entities) || entities.length !== productIds.length) {
        logger.error({ errors: body.errors, url }, 'catalog answered without entities');
        throw catalogUnavailable();
      }
      // An entity the catalog could not resolve is null with an error at its index. NOT_FOUND means the product
      // does not exist; any other error means the catalog failed, which is not the client's mistake.
      const failures = (body.errors ?? []).filter((error) => error.path?.[0] === '_entities');
      const broken = failures.find((error) => error.extensions?.code !== ErrorCode.NOT_FOUND);
      if (broken) {
        logger.error({ error: broken, url }, 'catalog failed to resolve a product');
        throw catalogUnavailable();
      }
      return entities.map((entity) => {
        const price = entity?.currentPrice;
        // The catalog speaks major units as Float; orders keep integer cents.
        return typeof price === 'number' && Number.isFinite(price) ? Math.round(price * 100) : null;
      });
    },
  };
}
