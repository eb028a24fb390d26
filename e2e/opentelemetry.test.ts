// OpenTelemetry across processes, as an operator's collector sees it: each process (a real one) exports to an OTLP/HTTP
// receiver started here, some in http/json and some in http/protobuf. One query is one trace rooted at the gateway,
// `traceparent` flows gateway -> subgraphs -> subgraph-to-subgraph calls, a delivered subscription event links to its
// mutation's trace, and log lines carry the trace and span IDs.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toGlobalId } from '@ordergraph/core';
import { graphql, readCounter, startOtlpReceiver, startRedis, subscribe, token, waitFor, wsClient, type OtlpReceiver, type ReceivedSpan, type TestRedis } from '@ordergraph/testkit';
import { startProcessSupergraph, type ProcessSupergraph } from '@ordergraph/testkit/e2e';

let receiver: OtlpReceiver;
let redis: TestRedis;
let supergraph: ProcessSupergraph;
let admin: string;

beforeAll(async () => {
  [receiver, redis] = await Promise.all([startOtlpReceiver(), startRedis()]);
  supergraph = await startProcessSupergraph({
    // Order events go through Redis, as in production. Spans leave each process within 100 ms instead of the SDK's 5 s.
    env: { REDIS_URL: redis.url, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '100', OTEL_TRACES_SAMPLER: 'parentbased_always_on' },
    envOf: {
      gateway: { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' },
      users: { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf', LOG_LEVEL: 'debug' },
      orders: { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' },
      catalog: { OTEL_SERVICE_NAME: 'catalog-eu', OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=test,service.namespace=ordergraph' },
    },
  });
  admin = await token('ADMIN', 'user-0000');
}, 300_000);
afterAll(async () => {
  await supergraph?.stop();
  await Promise.all([receiver?.close(), redis?.close()]);
});

// OTLP span kinds.
const SERVER = 2;
const CLIENT = 3;
const CONSUMER = 5;

const inTrace = (traceId: string) => receiver.spans.filter((span) => span.traceId === traceId);

/** The gateway's operation span named `graphql.operation <name>`, once it has been exported. */
async function operationSpan(name: string): Promise<ReceivedSpan> {
  const find = () => receiver.spans.find((span) => span.service === 'gateway' && span.name === `graphql.operation ${name}`);
  await waitFor(() => find() !== undefined, `the gateway's span of ${name}`);
  return find()!;
}

/** The chain of spans from `span` up to its trace's root, following parent IDs within the trace. */
function ancestry(span: ReceivedSpan, spans: ReceivedSpan[]): ReceivedSpan[] {
  const byId = new Map(spans.map((each) => [each.spanId, each]));
  const chain = [span];
  for (let parent = span.parentSpanId; parent; parent = byId.get(parent)?.parentSpanId) {
    const found = byId.get(parent);
    if (!found) break;
    chain.push(found);
  }
  return chain;
}

/** Waits until every span of the trace from `services` has arrived and each one's parent chain reaches the root. */
async function completeTrace(traceId: string, services: string[]): Promise<ReceivedSpan[]> {
  const complete = () => {
    const spans = inTrace(traceId);
    return services.every((service) => spans.some((span) => span.service === service)) && spans.every((span) => ancestry(span, spans).at(-1)!.parentSpanId === undefined);
  };
  await waitFor(complete, `trace ${traceId} from ${services.join(', ')}`);
  return inTrace(traceId);
}

describe('one query across three subgraphs', () => {
  const QUERY = `query UserOrders($id: ID!) { user(id: $id) { name orders(limit: 2) { id items { quantity product { name } } } } }`;
  let response: Awaited<ReturnType<typeof graphql>>;
  let spans: ReceivedSpan[];
  let operation: ReceivedSpan;

  beforeAll(async () => {
    response = await graphql(supergraph.url, QUERY, { variables: { id: toGlobalId('User', 'user-0001') }, token: admin });
    expect(response.body.errors).toBeUndefined();
    operation = await operationSpan('UserOrders');
    spans = await completeTrace(operation.traceId, ['gateway', 'users', 'orders', 'catalog-eu']);
  });

  it('is one trace: the gateway at its root, its operation span above every subgraph span', () => {
    const roots = spans.filter((span) => span.parentSpanId === undefined);
    expect(roots).toHaveLength(1);
    expect(roots[0]).toMatchObject({ service: 'gateway', name: 'POST /graphql' });
    expect(operation.parentSpanId).toBe(roots[0]!.spanId);
    const subgraphSpans = spans.filter((span) => span.service !== 'gateway');
    for (const name of ['users', 'orders', 'catalog-eu']) {
      const own = subgraphSpans.filter((span) => span.service === name);
      // Its HTTP server span, continued from the gateway's fetch, and graphql-js's spans below that.
      expect(own.some((span) => span.kind === SERVER)).toBe(true);
      expect(own.some((span) => span.name.startsWith('graphql.') || span.name.startsWith('query'))).toBe(true);
    }
    for (const span of subgraphSpans) expect(ancestry(span, spans).map((each) => each.spanId)).toContain(operation.spanId);
  });

  it('arrives in both encodings, named and described by the OTEL_* variables', () => {
    const encodings = Object.fromEntries(spans.map((span) => [span.service, span.encoding]));
    expect(encodings).toEqual({ gateway: 'json', users: 'protobuf', orders: 'json', 'catalog-eu': 'protobuf' });
    const catalog = spans.find((span) => span.service === 'catalog-eu')!;
    expect(catalog.resource).toMatchObject({ 'deployment.environment': 'test', 'service.namespace': 'ordergraph' });
  });

  it('puts the trace and span IDs on the log lines of the request', () => {
    const requestId = response.headers.get('x-request-id');
    const line = supergraph.processes.users.logs.find((entry) => entry['msg'] === 'graphql request' && entry['requestId'] === requestId);
    expect(line).toMatchObject({ trace_id: operation.traceId, span_id: expect.stringMatching(/^[0-9a-f]{16}$/) });
    expect(spans.map((span) => span.spanId)).toContain(line!['span_id']);
  });
});

it('traces a deferred query as one trace: the subgraph calls of its deferred part under its operation span', async () => {
  const response = await fetch(supergraph.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'multipart/mixed;deferSpec=20220824', authorization: `Bearer ${admin}` },
    body: JSON.stringify({
      query: 'query DeferredOrders($id: ID!) { user(id: $id) { name ... @defer { orders(limit: 1) { id } } } }',
      variables: { id: toGlobalId('User', 'user-0001') },
    }),
  });
  expect(await response.text()).toContain('"incremental"');
  const operation = await operationSpan('DeferredOrders');
  const spans = await completeTrace(operation.traceId, ['gateway', 'users', 'orders']);
  const orders = spans.filter((span) => span.service === 'orders' && span.kind === SERVER);
  expect(orders.length).toBeGreaterThan(0);
  for (const span of spans.filter((each) => each.service !== 'gateway')) expect(ancestry(span, spans).map((each) => each.spanId)).toContain(operation.spanId);
});

it('carries traceparent on subgraph-to-subgraph calls: users asks orders and the catalog within the same trace', async () => {
  const { body } = await graphql(supergraph.url, 'query FindLamps { search(query: "lamp") { __typename } }', { token: admin });
  expect(body.errors).toBeUndefined();
  const operation = await operationSpan('FindLamps');
  const spans = await completeTrace(operation.traceId, ['gateway', 'users', 'orders', 'catalog-eu']);
  // The catalog and orders were asked by users (its fetch span their parent), not by the gateway.
  for (const peer of ['orders', 'catalog-eu']) {
    const server = spans.find((span) => span.service === peer && span.kind === SERVER)!;
    const parent = spans.find((span) => span.spanId === server.parentSpanId)!;
    expect(parent).toMatchObject({ service: 'users', kind: CLIENT });
    expect(ancestry(server, spans).map((span) => span.spanId)).toContain(operation.spanId);
  }
});

it("links a delivered subscription event to its mutation's trace", async () => {
  const client = wsClient(supergraph.url, { token: admin });
  try {
    const created = subscribe(client, 'subscription { newOrderCreated { id } }');
    // The subscription is registered once orders has subscribed its channel; until then an event would be missed.
    let order: { id: string } | undefined;
    await waitFor(async () => {
      const { body } = await graphql(
        supergraph.url,
        'mutation PlaceOrder($items: [LineItemInput!]!) { createOrder(input: { items: $items }) { id } }',
        { variables: { items: [{ productId: toGlobalId('Product', 'product-0001'), quantity: 1 }] }, token: admin },
      );
      expect(body.errors).toBeUndefined();
      order = body.data!['createOrder'] as { id: string };
      await new Promise((resolve) => setTimeout(resolve, 200));
      return created.results.some((result) => result.data?.['newOrderCreated']?.id === order!.id);
    }, 'an order event delivered');
    const delivered = (span: ReceivedSpan) =>
      span.name === 'order event delivered' && toGlobalId('Order', String(span.attributes['ordergraph.order.id'])) === order!.id;
    await waitFor(() => receiver.spans.some(delivered), 'the delivery span');
    const delivery = receiver.spans.find(delivered)!;
    expect(delivery).toMatchObject({ service: 'orders', kind: CONSUMER });
    // Its link leads to the mutation's trace, to the span of orders that wrote the order.
    expect(delivery.links).toHaveLength(1);
    const [link] = delivery.links;
    const mutation = await completeTrace(link!.traceId, ['gateway', 'orders']);
    expect(mutation.find((span) => span.parentSpanId === undefined)).toMatchObject({ service: 'gateway' });
    expect(mutation.some((span) => span.name === 'graphql.operation PlaceOrder')).toBe(true);
    expect(mutation.find((span) => span.spanId === link!.spanId)).toMatchObject({ service: 'orders' });
    // A delivery starts a trace of its own: an event may reach many subscribers long after its mutation ended.
    expect(delivery.traceId).not.toBe(link!.traceId);
    expect(delivery.parentSpanId).toBeUndefined();
    await created.close();
  } finally {
    await client.dispose();
  }
});

it("does not count a request its client left as errors: its cancelled spans end unset, marked client_closed, and its call is not retried", async () => {
  const traceId = randomBytes(16).toString('hex');
  // The catalog stopped: the gateway's call waits until the client gives up.
  supergraph.processes.catalog.signal('SIGSTOP');
  try {
    const controller = new AbortController();
    const answer = fetch(supergraph.url, {
      method: 'POST',
      signal: controller.signal,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${admin}`, traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` },
      body: JSON.stringify({ query: `query Abandoned { product(id: "${toGlobalId('Product', 'product-0001')}") { name } }` }),
    }).catch((error: unknown) => error);
    const metrics = supergraph.url.replace(/\/graphql$/, '/metrics');
    await waitFor(async () => (await readCounter(metrics, 'gateway_subgraph_requests_in_flight', { subgraph: 'catalog' })) > 0, 'the call to the catalog under way');
    controller.abort();
    await answer;
  } finally {
    supergraph.processes.catalog.signal('SIGCONT');
  }
  const ended = (name: string) => inTrace(traceId).find((span) => span.service === 'gateway' && span.name === name);
  await waitFor(() => ended('POST /graphql') !== undefined, "the abandoned request's span");
  const gatewaySpans = inTrace(traceId).filter((span) => span.service === 'gateway');
  const cancelled = gatewaySpans.filter((span) => span.attributes['ordergraph.client_closed'] === true);
  // The subgraph fetch and the execution it failed: each still records why, as an event.
  expect(cancelled.map((span) => span.name).sort()).toEqual(['graphql.execute', 'http.fetch']);
  for (const span of cancelled) expect(span.events.some((event) => event.attributes['exception.message'] === 'The client closed the connection')).toBe(true);
  expect(gatewaySpans.filter((span) => span.status.code === 2)).toEqual([]);
});
