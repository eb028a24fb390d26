// Subscriptions over HTTP multipart, as Apollo Client's HttpLink sends them by default: the events arrive, and when the
// client unsubscribes the stream ends at the gateway and upstream on orders. Any other Accept that cannot carry a
// stream is refused before anything is subscribed.
import { ApolloClient, HttpLink, InMemoryCache, gql } from '@apollo/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toGlobalId } from '@ordergraph/core';
import { graphql, readCounter, token, waitFor } from '@ordergraph/testkit';
import { startSupergraph, type Supergraph } from '@ordergraph/testkit/e2e';

let supergraph: Supergraph;
let admin: string;

beforeAll(async () => {
  supergraph = await startSupergraph();
  admin = await token('ADMIN', 'user-0000');
});
afterAll(() => supergraph?.stop());

const metricsOf = (url: string) => url.replace(/\/graphql$/, '/metrics');
const open = (url: string) => readCounter(metricsOf(url), 'graphql_active_subscriptions');

async function placeOrder(): Promise<string> {
  const { body } = await graphql(supergraph.url, 'mutation Place($p: ID!) { createOrder(input: { items: [{ productId: $p, quantity: 1 }] }) { id } }', {
    variables: { p: toGlobalId('Product', 'product-0001') },
    token: admin,
  });
  expect(body.errors).toBeUndefined();
  return body.data!['createOrder'].id;
}

describe('multipart subscriptions (Apollo Client HttpLink)', () => {
  it('delivers events, and ends the stream at the gateway and on orders when the client unsubscribes', async () => {
    const client = new ApolloClient({ link: new HttpLink({ uri: supergraph.url, headers: { authorization: `Bearer ${admin}` } }), cache: new InMemoryCache() });
    const received: string[] = [];
    const subscription = client.subscribe<{ newOrderCreated: { id: string } }>({ query: gql`subscription Watch { newOrderCreated { id } }` }).subscribe({
      next: (result) => {
        if (result.data) received.push(result.data.newOrderCreated.id);
      },
    });
    await waitFor(async () => (await open(supergraph.subgraphUrl('orders'))) === 1, 'the upstream subscription');
    expect(await open(supergraph.url)).toBe(1);
    const order = await placeOrder();
    await waitFor(() => received.includes(order), 'the event');

    subscription.unsubscribe();
    await waitFor(async () => (await open(supergraph.url)) === 0 && (await open(supergraph.subgraphUrl('orders'))) === 0, 'both streams ended');
    client.stop();
  });

  it('answers in parts of {"payload": ...} under the protocol\'s content type', async () => {
    const controller = new AbortController();
    const response = await fetch(supergraph.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'multipart/mixed;boundary="graphql";subscriptionSpec=1.0,application/json', authorization: `Bearer ${admin}` },
      body: JSON.stringify({ query: 'subscription { newOrderCreated { id } }' }),
      signal: controller.signal,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('multipart/mixed;boundary="graphql";subscriptionSpec=1.0');
    await waitFor(async () => (await open(supergraph.subgraphUrl('orders'))) === 1, 'the upstream subscription');
    const order = await placeOrder();
    const reader = response.body!.getReader();
    let text = '';
    while (!text.includes(order)) text += new TextDecoder().decode((await reader.read()).value);
    expect(text).toMatch(/^\r\n--graphql\r\ncontent-type: application\/json; charset=utf-8\r\n\r\n\{\}\r\n--graphql/);
    while (!text.endsWith('--graphql')) text += new TextDecoder().decode((await reader.read()).value);
    expect(text).toContain(`\r\n--graphql\r\ncontent-type: application/json; charset=utf-8\r\n\r\n{"payload":{"data":{"newOrderCreated":{"id":"${order}"}}}}\r\n--graphql`);
    controller.abort();
    await waitFor(async () => (await open(supergraph.subgraphUrl('orders'))) === 0, 'the upstream subscription ended');
  });

  it.each(['application/json', 'multipart/mixed', 'text/html'])('refuses a subscription that accepts %s alone (406), subscribing nothing upstream', async (accept) => {
    const response = await fetch(supergraph.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept, authorization: `Bearer ${admin}` },
      body: JSON.stringify({ query: 'subscription { newOrderCreated { id } }' }),
    });
    expect(response.status).toBe(406);
    expect(((await response.json()) as { errors: { extensions: { code: string } }[] }).errors[0]!.extensions.code).toBe('NOT_ACCEPTABLE');
    expect(await open(supergraph.subgraphUrl('orders'))).toBe(0);
  });
});
