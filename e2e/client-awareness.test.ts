// Client awareness, with the gateway as its own process in front of the real subgraphs, a real Redis and an OTLP
// receiver started here: requests counted on /metrics by client name and version, the client on the request's spans,
// a manifest operation served to its own client only, and a client's rate limit and cost budget stopping that client
// while another, sending the same operation, goes on.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEV_JWT_SECRET, createLogger, createRedis, toGlobalId, type Redis } from '@ordergraph/core';
import { rateLimitKey } from '@ordergraph/gateway';
import { graphql, readCounter, startOtlpReceiver, startRedis, subscribe, token, waitFor, wsClient, type GraphQLResponse, type OtlpReceiver, type SubscribeRequest, type TestRedis } from '@ordergraph/testkit';
import { startProcessSupergraph, type ProcessSupergraph } from '@ordergraph/testkit/e2e';

const WEB_PRODUCTS = 'query WebProducts { products(limit: 1) { id } }';
const SHARED_PRODUCTS = 'query SharedProducts { products(limit: 1) { name } }';

let dir: string;
let receiver: OtlpReceiver;
let redis: TestRedis;
let inspect: Redis;
let supergraph: ProcessSupergraph;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ordergraph-clients-'));
  const manifest = join(dir, 'manifest.json');
  writeFileSync(
    manifest,
    JSON.stringify({
      format: 'apollo-persisted-query-manifest',
      version: 1,
      operations: [
        { id: 'web-products', name: 'WebProducts', type: 'query', body: WEB_PRODUCTS, clientName: 'web' },
        { id: 'shared-products', name: 'SharedProducts', type: 'query', body: SHARED_PRODUCTS },
      ],
    }),
  );
  [receiver, redis] = await Promise.all([startOtlpReceiver(), startRedis()]);
  inspect = createRedis(redis.url, createLogger('redis', 'silent'));
  supergraph = await startProcessSupergraph({
    envOf: {
      gateway: {
        REDIS_URL: redis.url,
        PERSISTED_QUERIES_MANIFEST: manifest,
        RATE_LIMIT_MAX: '5',
        RATE_LIMIT_MAX_BY_CLIENT: 'batch-importer=2,partner=8',
        RATE_LIMIT_COST_PER_WINDOW_BY_CLIENT: 'reporting=5',
        RATE_LIMIT_CLIENT_CLAIM: 'client_name',
        // Spans leave within 100 ms instead of the SDK's 5 s.
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_BSP_SCHEDULE_DELAY: '100',
        OTEL_TRACES_SAMPLER: 'parentbased_always_on',
      },
    },
  });
}, 300_000);
afterAll(async () => {
  await supergraph?.stop();
  inspect?.disconnect();
  await Promise.all([receiver?.close(), redis?.close()]);
  rmSync(dir, { recursive: true, force: true });
});

const metricsUrl = () => supergraph.url.replace(/\/graphql$/, '/metrics');
const requests = (labels: Record<string, string>) => readCounter(metricsUrl(), 'graphql_request_duration_seconds_count', labels);
const apollo = (name: string, version?: string) => ({ 'apollographql-client-name': name, ...(version ? { 'apollographql-client-version': version } : {}) });
const hive = (name: string, version?: string) => ({ 'graphql-client-name': name, ...(version ? { 'graphql-client-version': version } : {}) });

async function byDocumentId(documentId: string, headers: Record<string, string> = {}): Promise<GraphQLResponse> {
  const response = await fetch(supergraph.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', ...headers },
    body: JSON.stringify({ documentId }),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as GraphQLResponse['body'] };
}

describe('metrics by client', () => {
  it("count each request under the client's name and version, from Apollo's headers or Hive's", async () => {
    const query = 'query ByClient { products(limit: 1) { id } }';
    for (const headers of [apollo('web', '1.4.2'), apollo('web', '1.4.2'), hive('ios', '7.0.0'), {}]) {
      expect((await graphql(supergraph.url, query, { headers })).status).toBe(200);
    }
    expect(await requests({ operation: 'ByClient', client_name: 'web', client_version: '1.4.2', status: 'ok' })).toBe(2);
    expect(await requests({ operation: 'ByClient', client_name: 'ios', client_version: '7.0.0' })).toBe(1);
    expect(await requests({ operation: 'ByClient', client_name: 'unknown', client_version: 'unknown' })).toBe(1);
  });

  it('take no header value that is too long or holds other characters as a name, and the manifest names the owner of its document', async () => {
    await graphql(supergraph.url, 'query Hostile { products(limit: 1) { id } }', { headers: apollo(`x${'y'.repeat(200)}`) });
    await graphql(supergraph.url, 'query Hostile { products(limit: 1) { id } }', { headers: apollo('web"} 1 injected{a="b') });
    expect(await requests({ operation: 'Hostile', client_name: 'unknown' })).toBe(2);
    expect(await (await fetch(metricsUrl())).text()).not.toContain('injected');
    // The text of the web client's manifest operation, sent without a header: counted as web's.
    expect((await graphql(supergraph.url, WEB_PRODUCTS)).status).toBe(200);
    expect(await requests({ operation: 'WebProducts', client_name: 'web', client_version: 'unknown' })).toBe(1);
  });
});

it("puts the client on the request's span and its operation's, as Hive Gateway names them", async () => {
  const { status } = await graphql(supergraph.url, 'query Traced { products(limit: 1) { id } }', { headers: apollo('android', '3.1.0') });
  expect(status).toBe(200);
  const find = () => receiver.spans.find((span) => span.service === 'gateway' && span.name === 'graphql.operation Traced');
  await waitFor(() => find() !== undefined, "the gateway's span of Traced");
  const operation = find()!;
  expect(operation.attributes).toMatchObject({ 'hive.client.name': 'android', 'hive.client.version': '3.1.0' });
  const root = () => receiver.spans.find((span) => span.traceId === operation.traceId && span.parentSpanId === undefined);
  await waitFor(() => root() !== undefined, 'the request span');
  expect(root()).toMatchObject({ name: 'POST /graphql', attributes: expect.objectContaining({ 'hive.client.name': 'android', 'hive.client.version': '3.1.0' }) });
});

describe('per-client safelist', () => {
  it("serves a manifest operation with a clientName to that client, and refuses it to another or to one that does not say", async () => {
    const served = await byDocumentId('web-products', apollo('web'));
    expect(served.status).toBe(200);
    expect(served.body.data?.['products']).toHaveLength(1);
    for (const headers of [apollo('ios'), hive('android'), {}]) {
      const refused = await byDocumentId('web-products', headers);
      expect(refused.status).toBe(404);
      expect(refused.body.errors?.[0]?.extensions?.['code']).toBe('PERSISTED_QUERY_NOT_FOUND');
    }
    // Hive's header names the client as well.
    expect((await byDocumentId('web-products', hive('web'))).status).toBe(200);
  });

  it("over graphql-ws, takes the client from connection_init's payload, as a browser cannot send headers", async () => {
    const once = async (client: string) => {
      const ws = wsClient(supergraph.url, { connectionParams: apollo(client, '2.0.0') });
      try {
        const request: SubscribeRequest & { documentId: string } = { query: '', documentId: 'web-products' };
        return (await subscribe(ws, '', undefined, request).received(1))[0]!;
      } finally {
        await ws.dispose();
      }
    };
    expect((await once('web')).data?.['products']).toHaveLength(1);
    expect((await once('ios')).errors?.[0]?.extensions?.['code']).toBe('PERSISTED_QUERY_NOT_FOUND');
    expect(await requests({ operation: 'WebProducts', client_name: 'web', client_version: '2.0.0' })).toBe(1);
  });

  it('serves an operation without a clientName to every client', async () => {
    for (const headers of [apollo('web'), apollo('ios'), {}]) {
      const { status, body } = await byDocumentId('shared-products', headers);
      expect(status).toBe(200);
      expect(body.errors).toBeUndefined();
    }
  });
});

describe('per-client rate limits', () => {
  const LIMITED = 'query Limited { products(limit: 1) { id } }';

  it("stop a client at its own limit while another client of the same caller, same operation, goes on; counted per caller in Redis", async () => {
    const alice = await token('USER', 'user-0001');
    for (let i = 0; i < 2; i++) expect((await graphql(supergraph.url, LIMITED, { token: alice, headers: apollo('batch-importer') })).status).toBe(200);
    const stopped = await graphql(supergraph.url, LIMITED, { token: alice, headers: apollo('batch-importer') });
    expect(stopped.status).toBe(429);
    expect(stopped.body.errors?.[0]?.extensions).toMatchObject({ code: 'RATE_LIMITED', operation: 'Limited', limit: 2 });
    expect((await graphql(supergraph.url, LIMITED, { token: alice, headers: apollo('web') })).status).toBe(200);
    // One counter for the caller and operation, whatever client it speaks as: two allowed, one refused, one allowed.
    expect(await inspect.get(rateLimitKey('standard', `user:${toGlobalId('User', 'user-0001')}`, 'Limited'))).toBe('4');
  });

  it("raise the limit only for a caller whose verified token binds the client's name", async () => {
    const claiming = await token('USER', 'user-0002');
    for (let i = 0; i < 5; i++) expect((await graphql(supergraph.url, LIMITED, { token: claiming, headers: apollo('partner') })).status).toBe(200);
    // Saying "partner" is not enough: the default of 5 applies.
    expect((await graphql(supergraph.url, LIMITED, { token: claiming, headers: apollo('partner') })).body.errors?.[0]?.extensions).toMatchObject({ code: 'RATE_LIMITED', limit: 5 });
    const bound = await new SignJWT({ role: 'USER', client_name: 'partner' })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(toGlobalId('User', 'user-0003'))
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode(DEV_JWT_SECRET));
    for (let i = 0; i < 8; i++) expect((await graphql(supergraph.url, LIMITED, { token: bound, headers: apollo('partner') })).status).toBe(200);
    expect((await graphql(supergraph.url, LIMITED, { token: bound, headers: apollo('partner') })).body.errors?.[0]?.extensions).toMatchObject({ code: 'RATE_LIMITED', limit: 8 });
  });

  it("stop a client at its own cost budget while another, with no budget, runs the same operation", async () => {
    const caller = await token('USER', 'user-0004');
    const COSTLY = 'query Costly { products(limit: 10) { id name } }';
    const refused = await graphql(supergraph.url, COSTLY, { token: caller, headers: apollo('reporting') });
    expect(refused.status).toBe(429);
    expect(refused.body.errors?.[0]?.extensions).toMatchObject({ code: 'RATE_LIMITED', operation: 'cost', limit: 5 });
    const other = await graphql(supergraph.url, COSTLY, { token: caller, headers: apollo('web') });
    expect(other.status).toBe(200);
    expect(other.body.data?.['products']).toHaveLength(10);
  });
});
