import { it } from 'vitest';
import { token } from '@ordergraph/testkit';
import { startSupergraph } from '@ordergraph/testkit/e2e';
import { toGlobalId } from '@ordergraph/core';
it('try', async () => {
  const s = await startSupergraph();
  const t = token('ADMIN', 'user-0001');
  const go = async (query: string, accept: string) => {
    const r = await fetch(s.url, { method: 'POST', headers: { 'content-type': 'application/json', accept, authorization: `Bearer ${await t}` }, body: JSON.stringify({ query, variables: { id: toGlobalId('Order', 'order-0001') } }) });
    console.log(r.status, r.headers.get('content-type'), '\n', await r.text());
  };
  await go('{ products(limit: 3) @stream(initialCount: 1) { id name } }', 'multipart/mixed;incrementalSpec=v0.2');
  await go('query ($id: ID!) { order(id: $id) { id ... @defer(label: "u") { user { name } items @stream(initialCount: 1) { quantity product { name } } } } }', 'multipart/mixed;incrementalSpec=v0.2');
  await go('{ products(limit: 3) @stream(initialCount: 1) { id name } }', 'multipart/mixed;deferSpec=20220824');
  await s.stop();
}, 120000);
