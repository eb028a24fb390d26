// Who gets the GraphiQL page: on with a development token outside production; off by default in production, and
// when turned on there, served without any token (an administrator pastes their own).
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '@ordergraph/core';
import { loadGatewayConfig } from '../../src/config.js';
import { createGateway, type Gateway } from '../../src/gateway.js';
import { GRAPHIQL_TOKEN_SUBJECT } from '../../src/server/graphiql.js';
import { SUPERGRAPH_PATH } from '@ordergraph/composition';

const SECRET = 'graphiql-test-secret-of-32-characters!';
let gateway: Gateway | undefined;
afterEach(async () => {
  await gateway?.stop();
  gateway = undefined;
});

/** What a browser gets when it opens /graphql on a gateway started with `env`. */
async function openPage(env: Record<string, string>): Promise<{ status: number; html: string }> {
  gateway = createGateway({ config: loadGatewayConfig({ LOG_LEVEL: 'silent', JWT_SECRET: SECRET, SUBGRAPH_SIGNING_SECRET: SECRET, ...env }), supergraph: readFileSync(SUPERGRAPH_PATH, 'utf8'), logger: createLogger('gateway', 'silent') });
  const url = await gateway.listen(0, '127.0.0.1');
  const response = await fetch(url, { headers: { accept: 'text/html' } });
  return { status: response.status, html: await response.text() };
}

const isGraphiQL = (html: string) => html.includes('YogaGraphiQL.renderYogaGraphiQL');
const pageOptions = (html: string) => JSON.parse(/renderYogaGraphiQL\(\s*[^,]+,\s*(\{.*\}),\s*\);/s.exec(html)![1]!) as { headers?: string; subscriptionsProtocol?: string };

describe('GraphiQL', () => {
  it('is served in development with every asset inline and a USER token for user1 in the Headers editor', async () => {
    const { status, html } = await openPage({});
    expect(status).toBe(200);
    expect(isGraphiQL(html)).toBe(true);
    expect(html).not.toMatch(/<(script|link)[^>]+(src|href)="https?:/);
    const options = pageOptions(html);
    expect(options.subscriptionsProtocol).toBe('SSE');
    const authorization = (JSON.parse(options.headers!) as { Authorization: string }).Authorization;
    const claims: unknown = JSON.parse(Buffer.from(authorization.split('.')[1]!, 'base64url').toString());
    expect(claims).toMatchObject({ sub: GRAPHIQL_TOKEN_SUBJECT, role: 'USER' });
  });

  it('is off by default in production', async () => {
    const { html } = await openPage({ NODE_ENV: 'production' });
    expect(isGraphiQL(html)).toBe(false);
  });

  it('when turned on in production, comes with no token', async () => {
    const { status, html } = await openPage({ NODE_ENV: 'production', GRAPHIQL: 'on' });
    expect(status).toBe(200);
    expect(pageOptions(html).headers).toBeUndefined();
  });

  it('can be turned off in development', async () => {
    expect(isGraphiQL((await openPage({ GRAPHIQL: 'off' })).html)).toBe(false);
  });
});
