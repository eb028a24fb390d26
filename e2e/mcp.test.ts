// The MCP door (MCP=on): the trusted documents of a manifest as tools, over MCP's Streamable HTTP transport, reached
// with the SDK's own Client on the real supergraph. Tools listed and callable by what the caller's token grants, a call
// answered as the same document over /graphql is, rate-limited in the same bucket, a refusal as an MCP error, no token
// refused, tools following a manifest reload, and no door at all when MCP is off.
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toGlobalId } from '@ordergraph/core';
import { composeSupergraph, readSupergraphConfig, writeSupergraph } from '@ordergraph/composition';
import { graphql, readCounter, token, waitFor } from '@ordergraph/testkit';
import { startSupergraph, type Supergraph } from '@ordergraph/testkit/e2e';

interface Entry {
  id: string;
  name: string;
  type: 'query' | 'mutation' | 'subscription';
  body: string;
  description?: string;
}

// One document any signed-in user may call (its fields are @authenticated), one anyone may, two that need the admin
// scope, and two that are not offered: a subscription, and the first document again under another id.
const userOrders = `# A user's orders, newest first: the user themself or an administrator.
query UserOrders($id: ID!, $limit: Int = 3) { user(id: $id) { id name orders(limit: $limit) { id status total } } }`;
const productById = 'query ProductById($id: ID!) { product(id: $id) { id name price } }';
const listUsers = 'query ListUsers($filter: UserFilter, $limit: Int!) { users(filter: $filter, limit: $limit) { id email role } }';
const createProduct = 'mutation CreateProduct($input: CreateProductInput!) { createProduct(input: $input) { id name } }';
const expensive = 'query BulkSearch { products(limit: 2) { id } }';
const entries: Entry[] = [
  { id: 'user-orders', name: 'UserOrders', type: 'query', body: userOrders },
  { id: 'user-orders-v2', name: 'UserOrders', type: 'query', body: userOrders },
  { id: 'product', name: 'ProductById', type: 'query', body: productById },
  { id: 'list-users', name: 'ListUsers', type: 'query', body: listUsers, description: 'Users, oldest first (administrators only).' },
  { id: 'create-product', name: 'CreateProduct', type: 'mutation', body: createProduct },
  { id: 'bulk-search', name: 'BulkSearch', type: 'query', body: expensive },
  { id: 'new-orders', name: 'NewOrders', type: 'subscription', body: 'subscription NewOrders { newOrderCreated { id } }' },
];

function writeManifest(path: string, operations: readonly Entry[]) {
  writeFileSync(`${path}.tmp`, JSON.stringify({ format: 'apollo-persisted-query-manifest', version: 1, operations }));
  renameSync(`${path}.tmp`, path);
}

const mcpUrl = (graphqlUrl: string) => new URL('/mcp', graphqlUrl);

/** A connected SDK client, with this bearer token on every request (none: no Authorization header). */
async function connect(url: string, bearer?: string, more: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'ordergraph-e2e', version: '1.0.0' });
  const headers: Record<string, string> = { ...(bearer ? { authorization: `Bearer ${bearer}` } : {}), ...more };
  await client.connect(new StreamableHTTPClientTransport(mcpUrl(url), { requestInit: { headers } }));
  return client;
}

const names = async (client: Client) => (await client.listTools()).tools.map((tool) => tool.name).sort();

let supergraph: Supergraph;
/** Every process's log lines (debug: the subgraphs log each request they serve there). */
const logs: string[] = [];
let dir: string;
let supergraphPath: string;
let manifest: string;
let userToken: string;
let adminToken: string;
const userId = toGlobalId('User', 'user-0001');

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ordergraph-mcp-'));
  manifest = join(dir, 'manifest.json');
  writeManifest(manifest, entries);
  supergraph = await startSupergraph({
    redis: true,
    env: { LOG_LEVEL: 'debug' },
    logs: { write: (line: string) => void logs.push(line) },
    supergraphFile: (supergraphPath = join(dir, 'supergraph.graphql')),
    gatewayEnv: {
      SUPERGRAPH_POLL_INTERVAL: '50',
      MCP: 'on',
      PERSISTED_QUERIES_MANIFEST: manifest,
      PERSISTED_QUERIES_MANIFEST_POLL_MS: '50',
      RATE_LIMIT_EXPENSIVE_OPERATIONS: 'BulkSearch',
      RATE_LIMIT_EXPENSIVE_MAX: '2',
    },
  });
  [userToken, adminToken] = await Promise.all([token('USER', 'user-0001'), token('ADMIN', 'user-0000')]);
});
afterAll(async () => {
  await supergraph?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('the MCP door', () => {
  it('lists to a USER the tools its token allows, and to an ADMIN the admin tools besides', async () => {
    const user = await connect(supergraph.url, userToken);
    const admin = await connect(supergraph.url, adminToken);
    expect(await names(user)).toEqual(['BulkSearch', 'ProductById', 'UserOrders']);
    expect(await names(admin)).toEqual(['BulkSearch', 'CreateProduct', 'ListUsers', 'ProductById', 'UserOrders']);
    await Promise.all([user.close(), admin.close()]);
  });

  it('describes each tool: its description, its variables as JSON Schema against the served schema, read-only or not', async () => {
    const admin = await connect(supergraph.url, adminToken);
    const tools = new Map((await admin.listTools()).tools.map((tool) => [tool.name, tool]));
    expect(tools.get('UserOrders')).toMatchObject({
      description: "A user's orders, newest first: the user themself or an administrator.",
      inputSchema: {
        type: 'object',
        properties: { id: { type: 'string' }, limit: { type: 'integer', default: 3 } },
        required: ['id'],
        additionalProperties: false,
      },
      annotations: { readOnlyHint: true },
    });
    expect(tools.get('ListUsers')?.description).toBe('Users, oldest first (administrators only).');
    const input = tools.get('CreateProduct')!.inputSchema.properties!['input'] as { type: string; required: string[]; properties: Record<string, unknown> };
    expect(input).toMatchObject({ type: 'object', required: ['name', 'price'], additionalProperties: false });
    expect(input.properties['imageUrl']).toMatchObject({ type: 'string', format: 'uri' });
    expect(tools.get('CreateProduct')).toMatchObject({ description: 'The trusted mutation CreateProduct.', annotations: { readOnlyHint: false, destructiveHint: true } });
    await admin.close();
  });

  it('answers a call as the same document over /graphql answers it', async () => {
    const user = await connect(supergraph.url, userToken);
    const result = (await user.callTool({ name: 'UserOrders', arguments: { id: userId, limit: 2 } })) as CallToolResult;
    const direct = await graphql(supergraph.url, userOrders, { token: userToken, variables: { id: userId, limit: 2 } });
    expect(direct.body.data!['user'].orders).toHaveLength(2);
    expect(result.isError).toBe(false);
    expect(result.structuredContent).toEqual(direct.body);
    expect(JSON.parse((result.content[0] as { text: string }).text)).toEqual(direct.body);
    // A tool the caller may use still meets the subgraphs' own checks: another user's account is not this user's to
    // read (the users subgraph answers it as not found), through the tool as over /graphql.
    const someoneElse = { id: toGlobalId('User', 'user-0002') };
    const other = (await user.callTool({ name: 'UserOrders', arguments: someoneElse })) as CallToolResult;
    const otherDirect = await graphql(supergraph.url, userOrders, { token: userToken, variables: someoneElse });
    expect(otherDirect.body).toMatchObject({ data: { user: null }, errors: [{ path: ['user'], extensions: { code: 'NOT_FOUND' } }] });
    expect(other).toMatchObject({ isError: false, structuredContent: { data: { user: null }, errors: [{ path: ['user'], extensions: { code: 'NOT_FOUND' } }] } });
    // Arguments that do not fit the variables are GraphQL's to refuse, as on /graphql: a result marked as an error.
    const missing = (await user.callTool({ name: 'UserOrders', arguments: { limit: 'two' } })) as CallToolResult;
    expect(missing.isError).toBe(true);
    expect(missing.structuredContent).toMatchObject({ errors: expect.arrayContaining([expect.objectContaining({ message: expect.stringContaining('"$id"') })]) });
    await user.close();
  });

  it("logs a call under the MCP request's ID, which reaches the subgraphs it asks, as any request's does", async () => {
    const requestId = 'mcp-e2e-call-0001';
    const user = await connect(supergraph.url, userToken, { 'x-request-id': requestId });
    expect((await user.callTool({ name: 'ProductById', arguments: { id: toGlobalId('Product', 'product-0002') } })).isError).toBe(false);
    const lines = logs.join('').split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line['requestId'] === requestId);
    expect(lines).toContainEqual(expect.objectContaining({ service: 'gateway', event: 'mcp_tool_call', tool: 'ProductById', userId, outcome: 'ok' }));
    expect(lines).toContainEqual(expect.objectContaining({ service: 'catalog', msg: 'graphql request' }));
    await user.close();
  });

  it('refuses a USER calling an ADMIN tool with an MCP error naming what it requires, and runs nothing', async () => {
    const user = await connect(supergraph.url, userToken);
    const before = await readCounter(supergraph.url.replace('/graphql', '/metrics'), 'graphql_request_duration_seconds_count', { operation: 'CreateProduct' });
    const refusal = await user.callTool({ name: 'CreateProduct', arguments: { input: { name: 'Agent lamp', price: 10 } } }).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(McpError);
    expect(refusal).toMatchObject({ code: -32602, data: { code: 'FORBIDDEN' } });
    expect((refusal as McpError).message).toContain('Tool CreateProduct requires scopes admin');
    expect(await readCounter(supergraph.url.replace('/graphql', '/metrics'), 'graphql_request_duration_seconds_count', { operation: 'CreateProduct' })).toBe(before);
    // The connection is still good for what the token allows.
    expect((await user.callTool({ name: 'ProductById', arguments: { id: toGlobalId('Product', 'product-0001') } })).isError).toBe(false);
    const unknown = await user.callTool({ name: 'DropEverything', arguments: {} }).catch((error: unknown) => error);
    expect(unknown).toMatchObject({ code: -32602, data: { code: 'NOT_FOUND' } });
    await user.close();
  });

  it('lets the GraphQL pipeline refuse a call: the rate limit counts MCP calls and /graphql requests in one bucket', async () => {
    const user = await connect(supergraph.url, userToken);
    expect((await user.callTool({ name: 'BulkSearch', arguments: {} })).isError).toBe(false);
    const direct = await fetch(supergraph.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${userToken}` },
      body: JSON.stringify({ documentId: 'bulk-search' }),
    });
    expect(direct.status).toBe(200);
    const limited = (await user.callTool({ name: 'BulkSearch', arguments: {} })) as CallToolResult;
    expect(limited.isError).toBe(true);
    expect(limited.structuredContent).toMatchObject({ errors: [{ extensions: { code: 'RATE_LIMITED' } }] });
    // Another user's bucket is untouched.
    const other = await connect(supergraph.url, await token('USER', 'user-0002'));
    expect((await other.callTool({ name: 'BulkSearch', arguments: {} })).isError).toBe(false);
    await Promise.all([user.close(), other.close()]);
  });

  it('refuses a client without a token (401, WWW-Authenticate: Bearer), and one with a bad token', async () => {
    // The SDK's StreamableHTTPError carries the HTTP status as its code.
    await expect(connect(supergraph.url)).rejects.toMatchObject({ code: 401 });
    await expect(connect(supergraph.url, 'not-a-token')).rejects.toMatchObject({ code: 401 });
    const response = await fetch(mcpUrl(supergraph.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer');
    expect(await response.json()).toMatchObject({ errors: [{ extensions: { code: 'UNAUTHENTICATED' } }] });
  });

  it('takes POST only: no event stream to open with GET, no session to end with DELETE (405, Allow: POST)', async () => {
    for (const method of ['GET', 'DELETE']) {
      const response = await fetch(mcpUrl(supergraph.url), { method, headers: { authorization: `Bearer ${userToken}`, accept: 'text/event-stream' } });
      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe('POST');
      expect(await response.json()).toMatchObject({ errors: [{ extensions: { code: 'METHOD_NOT_ALLOWED' } }] });
    }
  });

  it('follows a manifest reload: a new document becomes a tool without a restart', async () => {
    const admin = await connect(supergraph.url, adminToken);
    writeManifest(manifest, [...entries, { id: 'product-price', name: 'ProductPrice', type: 'query', body: 'query ProductPrice($id: ID!) { product(id: $id) { price } }' }]);
    await waitFor(async () => (await names(admin)).includes('ProductPrice'), 'the reloaded manifest');
    const result = (await admin.callTool({ name: 'ProductPrice', arguments: { id: toGlobalId('Product', 'product-0001') } })) as CallToolResult;
    expect(result.structuredContent).toEqual({ data: { product: { price: expect.any(Number) } } });
    await admin.close();
  });
});

describe('tools on a reloaded supergraph', () => {
  /** The repository's subgraphs composed again, `Query.product` made admin-only in catalog's schema. */
  function deployAdminOnlyProduct() {
    const sources = readSupergraphConfig().map((source) =>
      source.name === 'catalog' ? { ...source, typeDefs: source.typeDefs.replace('product(id: ID!): Product', 'product(id: ID!): Product @requiresScopes(scopes: [["admin"]])') } : source,
    );
    if (sources.every((source, i) => source.typeDefs === readSupergraphConfig()[i]!.typeDefs)) throw new Error("catalog's Query.product is no longer where this test expects it");
    writeSupergraph(supergraphPath, composeSupergraph(sources, supergraph.subgraphs));
  }

  it('follows the requirements of the supergraph being served: a field made admin-only takes its tools from USER callers', async () => {
    const user = await connect(supergraph.url, userToken);
    const admin = await connect(supergraph.url, adminToken);
    expect(await names(user)).toContain('ProductById');
    deployAdminOnlyProduct();
    try {
      await waitFor(async () => !(await names(user)).includes('ProductById'), 'the reloaded supergraph');
      expect(await names(admin)).toContain('ProductById');
      await expect(user.callTool({ name: 'ProductById', arguments: { id: toGlobalId('Product', 'product-0001') } })).rejects.toMatchObject({ data: { code: 'FORBIDDEN' } });
    } finally {
      writeSupergraph(supergraphPath, supergraph.sdl);
    }
    await waitFor(async () => (await names(user)).includes('ProductById'), 'the first supergraph again');
    await Promise.all([user.close(), admin.close()]);
  });
});

describe('MCP off (the default)', () => {
  let off: Supergraph;
  beforeAll(async () => {
    off = await startSupergraph({ gatewayEnv: { PERSISTED_QUERIES_MANIFEST: manifest } });
  });
  afterAll(() => off?.stop());

  it('has no door: /mcp is 404, for the SDK client as for a plain POST', async () => {
    await expect(connect(off.url, adminToken)).rejects.toMatchObject({ code: 404 });
    const response = await fetch(mcpUrl(off.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}`, accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(response.status).toBe(404);
    // A browser's GET (text/html) gets the development landing page outside production, as any unknown path does.
    for (const accept of ['text/event-stream', 'application/json']) expect((await fetch(mcpUrl(off.url), { headers: { accept } })).status, accept).toBe(404);
  });
});
