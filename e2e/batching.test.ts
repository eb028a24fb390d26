// HTTP batching (BATCH_MAX_OPERATIONS): a JSON array of operations in one POST, answered with an array of results, as
// Apollo Client's BatchHttpLink sends it; each operation counts on its own against the limits and the rate limit.
import { ApolloClient, InMemoryCache, gql } from '@apollo/client';
import { BatchHttpLink } from '@apollo/client/link/batch-http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toGlobalId } from '@ordergraph/core';
import { withoutRequestIds } from '@ordergraph/testkit';
import { startSupergraph, type Supergraph } from '@ordergraph/testkit/e2e';

const BATCH_MAX = 3;
let supergraph: Supergraph;
beforeAll(async () => {
  supergraph = await startSupergraph({ gatewayEnv: { BATCH_MAX_OPERATIONS: String(BATCH_MAX), RATE_LIMIT_MAX: '4' } });
});
afterAll(() => supergraph?.stop());

interface Result {
  data?: Record<string, unknown> | null;
  errors?: { message: string; extensions?: Record<string, unknown> }[];
}

async function batch(operations: { query: string; variables?: Record<string, unknown> }[], headers: Record<string, string> = {}) {
  const response = await fetch(supergraph.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json, application/json', ...headers },
    body: JSON.stringify(operations),
  });
  const body = (await response.json()) as Result[] | Result;
  const results = Array.isArray(body) ? body.map((result) => withoutRequestIds(result, response.headers)) : withoutRequestIds(body, response.headers);
  return { status: response.status, body: results };
}

describe('HTTP batching', () => {
  it("serves Apollo Client's BatchHttpLink: several queries in one request, each with its own result", async () => {
    let requests = 0;
    const client = new ApolloClient({
      cache: new InMemoryCache(),
      link: new BatchHttpLink({
        uri: supergraph.url,
        batchMax: BATCH_MAX,
        fetch: (input, init) => {
          requests++;
          return fetch(input, init);
        },
      }),
    });
    const productId = toGlobalId('Product', 'product-0001');
    const [product, products] = await Promise.all([
      client.query({ query: gql`query One($id: ID!) { product(id: $id) { id name } }`, variables: { id: productId } }),
      client.query({ query: gql`query Two { products(limit: 2) { id } }` }),
    ]);
    expect(requests).toBe(1);
    expect(product.data).toEqual({ product: { __typename: 'Product', id: productId, name: expect.any(String) } });
    expect((products.data as { products: unknown[] }).products).toHaveLength(2);
  });

  it('refuses a batch of more operations than BATCH_MAX_OPERATIONS with 413', async () => {
    const { status, body } = await batch(Array.from({ length: BATCH_MAX + 1 }, () => ({ query: '{ __typename }' })));
    expect(status).toBe(413);
    expect(body).toMatchObject({ errors: [{ message: `Batching is limited to ${BATCH_MAX} operations per request.`, extensions: { code: 'PAYLOAD_TOO_LARGE' } }] });
  });

  it('holds each operation of a batch to the limits on its own: one over the complexity limit is refused, the others answered', async () => {
    const { body } = await batch([{ query: '{ products(limit: 1) { id } }' }, { query: '{ products(limit: 2600) { id name } }' }]);
    const [fine, expensive] = body as Result[];
    expect(fine).toEqual({ data: { products: [{ id: expect.any(String) }] } });
    expect(expensive!.data ?? undefined).toBeUndefined();
    expect(expensive!.errors).toEqual([expect.objectContaining({ extensions: expect.objectContaining({ code: 'COMPLEXITY_LIMIT_EXCEEDED' }) })]);
  });

  it('counts each operation of a batch against the rate limit (RATE_LIMIT_MAX=4)', async () => {
    // The client is this test's address; the operation's name is used nowhere else in this file.
    const operation = { query: 'query Counted { products(limit: 1) { id } }' };
    const first = await batch([operation, operation, operation]);
    expect((first.body as Result[]).every((result) => result.errors === undefined)).toBe(true);
    const second = (await batch([operation, operation, operation])).body as Result[];
    expect(second[0]!.errors).toBeUndefined();
    for (const refused of second.slice(1)) {
      expect(refused.errors).toEqual([expect.objectContaining({ extensions: expect.objectContaining({ code: 'RATE_LIMITED', operation: 'Counted', limit: 4 }) })]);
    }
  });

  it('refuses an operation with @defer inside a batch (one JSON array cannot carry parts), and answers the others', async () => {
    const { status, body } = await batch(
      [
        { query: 'query Deferred($id: ID!) { product(id: $id) { id ... @defer { name } } }', variables: { id: toGlobalId('Product', 'product-0001') } },
        { query: 'query Plain { __typename }' },
      ],
      { accept: 'multipart/mixed;deferSpec=20220824, application/json' },
    );
    expect(status).toBe(200);
    const [deferred, plain] = body as Result[];
    expect(deferred).toEqual({ errors: [expect.objectContaining({ extensions: { code: 'NOT_ACCEPTABLE' } })] });
    expect(plain).toEqual({ data: { __typename: 'Query' } });
  });
});
