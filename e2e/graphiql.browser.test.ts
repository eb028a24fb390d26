// GraphiQL as a developer meets it, in a real headless Chromium: the page comes from the gateway alone (every request
// for another host is blocked and counted), a query typed into the editor runs, and a subscription started from the
// page shows the event of an order placed meanwhile, all under the gateway's Content-Security-Policy (no violation is
// reported). The last screen is kept in test-artifacts/.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toGlobalId } from '@ordergraph/core';
import { findChromium, graphql, isLocal, launchChromium, readCounter, token, waitFor } from '@ordergraph/testkit';
import { REPO_ROOT } from '@ordergraph/composition';
import { startSupergraph, type Supergraph } from '@ordergraph/testkit/e2e';

const chromiumPath = findChromium();
const ARTIFACTS = join(REPO_ROOT, 'test-artifacts');

describe.skipIf(chromiumPath === undefined)('GraphiQL in a browser', () => {
  let supergraph: Supergraph;
  let browser: Browser;
  let page: Page;
  const blocked: string[] = [];
  const violations: string[] = [];

  beforeAll(async () => {
    [supergraph, browser] = await Promise.all([startSupergraph(), launchChromium(chromiumPath!)]);
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    await context.route('**/*', (route) => {
      const url = route.request().url();
      if (isLocal(url)) return route.continue();
      blocked.push(url);
      return route.abort('blockedbyclient');
    });
    await context.routeWebSocket(/.*/, (socket) => {
      if (isLocal(socket.url())) return socket.connectToServer();
      blocked.push(socket.url());
      return socket.close();
    });
    page = await context.newPage();
    page.on('console', (message) => {
      if (message.text().includes('Content Security Policy')) violations.push(message.text());
    });
    const response = await page.goto(supergraph.url);
    expect(response?.headers()['content-security-policy']).toContain("default-src 'self'");
  });
  afterAll(async () => {
    if (page) {
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: join(ARTIFACTS, 'graphiql.png') });
    }
    await browser?.close();
    await supergraph?.stop();
  });

  /** Replaces the operation in the query editor (Monaco) with `text`, as typed, and runs it. */
  async function run(text: string) {
    await page.locator('.graphiql-query-editor .monaco-editor').first().click();
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.press('Delete');
    await page.keyboard.insertText(text);
    // GraphiQL infers the operation to run from the editor a moment later; its tab shows the name once it has.
    const name = /^\s*(?:query|mutation|subscription)\s+(\w+)/.exec(text)?.[1];
    if (name) await page.locator('.graphiql-tab', { hasText: name }).first().waitFor();
    await page.locator('.graphiql-execute-button').click();
  }
  /** What an editor shows; Monaco renders spaces as no-break spaces. */
  const shown = async (selector: string) => (await page.locator(selector).innerText()).replaceAll('\u00a0', ' ');
  const responseText = () => shown('.graphiql-response');

  it('renders from the gateway alone, with a development token in the Headers editor', async () => {
    await page.locator('.graphiql-query-editor .monaco-editor').first().waitFor();
    await waitFor(async () => (await shown('.graphiql-editor-tool')).includes('"Authorization": "Bearer ey'), 'the token in the Headers editor');
    expect(blocked).toEqual([]);
    expect(violations).toEqual([]);
  });

  it('runs a query typed into the editor and shows its result', async () => {
    const expected = await graphql<{ products: { id: string; name: string }[] }>(supergraph.url, '{ products(limit: 3) { id name } }');
    const names = expected.body.data!.products.map((product) => product.name);
    await run('query FirstProducts { products(limit: 3) { id name } }');
    await waitFor(async () => (await responseText()).includes(names[0]!), 'the products in the result pane');
    for (const name of names) expect(await responseText()).toContain(name);
    expect(blocked).toEqual([]);
  });

  it('shows a subscription event after a mutation', async () => {
    await run('subscription NewOrders { newOrderCreated { id status total } }');
    // The page is subscribed once the gateway counts an active subscription.
    const metrics = supergraph.url.replace(/\/graphql$/, '/metrics');
    await waitFor(async () => (await readCounter(metrics, 'graphql_active_subscriptions')) === 1, 'the page subscribed');
    // Placed as user1@example.com, the user the page's development token speaks for.
    const placed = await graphql<{ createOrder: { id: string } }>(
      supergraph.url,
      'mutation Place($input: CreateOrderInput!) { createOrder(input: $input) { id } }',
      { token: await token('USER', 'user-0001'), variables: { input: { items: [{ productId: toGlobalId('Product', 'product-0003'), quantity: 2 }] } } },
    );
    const orderId = placed.body.data!.createOrder.id;
    await waitFor(async () => (await responseText()).includes(orderId), 'the new order in the result pane');
    expect(await responseText()).toContain('PENDING');
    expect(blocked).toEqual([]);
  });
});
