// node(id) for a type another subgraph owns: its owner resolves the reference first (its `_entities`, as the gateway
// would ask), so node(id) answers with exactly the owner's visibility even when no field of the owner is selected.
import { GraphQLError } from 'graphql';
import { ErrorCode, notFound, unauthenticated, type Logger } from '@ordergraph/core';
import { createPeer, type PeerSettings } from '@ordergraph/subgraph-kit';
import type { Reference } from '../mappers.js';

export interface NodeOwners {
  /** The reference when its owner resolves it for the caller; throws the owner's refusal (NOT_FOUND, UNAUTHENTICATED) otherwise. */
  resolve(reference: Reference, authorization: string | undefined): Promise<Reference>;
}

const RESOLVE = `query ResolveNode($representations: [_Any!]!) { _entities(representations: $representations) { __typename } }`;

/** The owner's refusals, relayed as the client would get them from the owner; anything else means the owner failed. */
const RELAYED: Partial<Record<string, (reference: Reference) => GraphQLError>> = {
  [ErrorCode.NOT_FOUND]: (reference) => notFound(reference.__typename, reference.id),
  [ErrorCode.UNAUTHENTICATED]: () => unauthenticated(),
};

type Entities = { _entities?: ({ __typename?: string } | null)[] | null };

export function createNodeOwners(urls: Record<Reference['__typename'], string>, logger: Logger, settings: PeerSettings): NodeOwners {
  const owners = {
    Order: createPeer({ name: 'orders', url: urls.Order, logger, ...settings, unavailableMessage: 'The orders service is temporarily unavailable' }),
    Product: createPeer({ name: 'catalog', url: urls.Product, logger, ...settings, unavailableMessage: 'The catalog is temporarily unavailable' }),
  };
  return {
    async resolve(reference, authorization) {
      const owner = owners[reference.__typename];
      const body = await owner.request<Entities>(RESOLVE, { representations: [reference] }, authorization);
      if (body.data?._entities?.[0]?.__typename === reference.__typename) return reference;
      const code = body.errors?.[0]?.extensions?.code;
      const refusal = typeof code === 'string' ? RELAYED[code] : undefined;
      if (refusal) throw refusal(reference);
      throw owner.unavailable({ errors: body.errors, reason: 'did not resolve the node' });
    },
  };
}
