// /metrics as an operator alerts on it: per subgraph (duration, errors by code, timeouts, in flight), per operation
// (named from the parsed document, a bounded set of names), subscriptions (active, started, ended by reason), Redis
// (connection state, failed commands) and the process; the Grafana dashboard in deploy/ asks only for these.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toGlobalId } from '@ordergraph/core';
import { REPO_ROOT } from '@ordergraph/composition';
import { graphql, readCounter, subscribe, token, waitFor, wsClient } from '@ordergraph/testkit';
import { startSupergraph, type Supergraph } from '@ordergraph/testkit/e2e';

let supergraph: Supergraph;
let admin: string;
const metricsUrl = () => supergraph.url.replace('/graphql', '/metrics');
const scrape = async () => (await fetch(metricsUrl())).text();
const gauge = (name: string, labels: Record<string, string> = {}) => readCounter(metricsUrl(), name, labels);

beforeAll(async () => {
  supergraph = await startSupergraph({ redis: true });
  admin = await token('ADMIN', 'user-0000');
});
afterAll(() => supergraph?.stop());

const ACROSS_THREE = `query UserWithOrders($id: ID!) { user(id: $id) { name orders(limit: 2) { id items { product { name } } } } }`;

describe('per subgraph', () => {
  it('times every call, by subgraph, with nothing left in flight', async () => {
    const { body } = await graphql(supergraph.url, ACROSS_THREE, { variables: { id: toGlobalId('User', 'user-0001') }, token: admin });
    expect(body.errors).toBeUndefined();
    for (const subgraph of ['users', 'orders', 'catalog']) {
      expect(await gauge('gateway_subgraph_request_duration_seconds_count', { subgraph })).toBeGreaterThan(0);
      expect(await gauge('gateway_subgraph_requests_in_flight', { subgraph })).toBe(0);
    }
  });

  it('counts errors by code for the subgraph that failed', async () => {
    const before = await gauge('gateway_subgraph_errors_total', { subgraph: 'users' });
    // Alice reading another user: the gateway lets a signed-in caller through, the users subgraph refuses.
    const alice = await token('USER', 'user-0001');
    const { body } = await graphql(supergraph.url, `{ user(id: "${toGlobalId('User', 'user-0002')}") { email } }`, { token: alice });
    expect(body.errors?.length).toBeGreaterThan(0);
    expect(await gauge('gateway_subgraph_errors_total', { subgraph: 'users' })).toBeGreaterThan(before);
    expect(await scrape()).toMatch(/gateway_subgraph_errors_total\{[^}]*subgraph="users"[^}]*code="[A-Z_]+"|gateway_subgraph_errors_total\{[^}]*code="[A-Z_]+"[^}]*subgraph="users"/);
  });
});

describe('per operation', () => {
  it('names operations from the parsed document, not from what the body claims', async () => {
    await graphql(supergraph.url, `query FromTheDocument { __typename }`, { operationName: 'FromTheDocument' });
    await fetch(supergraph.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'query Real { __typename }', operationName: 'Real', extensions: { operationName: 'Fake' } }),
    });
    expect(await gauge('graphql_request_duration_seconds_count', { operation: 'FromTheDocument' })).toBe(1);
    expect(await gauge('graphql_request_duration_seconds_count', { operation: 'Real' })).toBe(1);
    const invalid = await graphql(supergraph.url, `query Broken { user(id: "x") { name } }`);
    expect(invalid.body.errors?.length).toBeGreaterThan(0);
    expect(await scrape()).toMatch(/graphql_operation_errors_total\{[^}]*operation="Broken"[^}]*code="[A-Z_]+"/);
  });

  it('keeps the number of operation labels bounded however many names clients invent', { timeout: 120_000 }, async () => {
    for (let batch = 0; batch < 13; batch++) {
      await Promise.all(Array.from({ length: 20 }, (_, i) => graphql(supergraph.url, `query Invented${batch * 20 + i} { __typename }`)));
    }
    const names = new Set([...(await scrape()).matchAll(/graphql_request_duration_seconds_count\{[^}]*operation="([^"]+)"/g)].map((match) => match[1]));
    expect([...names].filter((name) => name?.startsWith('Invented')).length).toBeGreaterThan(100);
    expect(names.size).toBeLessThanOrEqual(201);
    expect(names.has('other')).toBe(true);
  });
});

describe('subscriptions and Redis', () => {
  it('counts subscriptions started and ended by reason', async () => {
    const started = await gauge('graphql_subscriptions_started_total');
    const stream = subscribe(wsClient(supergraph.url, { token: admin }), `subscription { newOrderCreated { id } }`);
    await waitFor(async () => (await gauge('graphql_active_subscriptions')) === 1, 'the subscription');
    expect(await gauge('graphql_subscriptions_started_total')).toBe(started + 1);
    await stream.close();
    await waitFor(async () => (await gauge('graphql_subscriptions_ended_total', { reason: 'client' })) === 1, 'its end');
  });

  it('reports the Redis connection and its failed commands', async () => {
    expect(await gauge('redis_connection_up', { connection: 'shared-state' })).toBe(1);
    await supergraph.redis!.stop();
    try {
      await waitFor(async () => (await gauge('redis_connection_up', { connection: 'shared-state' })) === 0, 'the connection down');
    } finally {
      await supergraph.redis!.start();
    }
    await waitFor(async () => (await gauge('redis_connection_up', { connection: 'shared-state' })) === 1, 'the connection back');
    expect(await scrape()).toMatch(/redis_command_errors_total\{[^}]*connection="shared-state"/);
    expect(await scrape()).toContain('process_cpu_seconds_total');
  });
});

describe('the Grafana dashboard', () => {
  it('asks only for metrics the processes export', async () => {
    const dashboard = JSON.parse(readFileSync(resolve(REPO_ROOT, 'deploy/grafana/ordergraph.json'), 'utf8')) as { panels: { title: string; targets: { expr: string }[] }[] };
    const exported = new Set([...(await scrape()).matchAll(/^([a-z0-9_:]+?)(?:_bucket|_count|_sum)?[{ ]/gm)].map((match) => match[1]));
    for (const subgraph of Object.values(supergraph.subgraphs)) {
      const text = await (await fetch(subgraph.replace('/graphql', '/metrics'))).text();
      for (const match of text.matchAll(/^([a-z0-9_:]+?)(?:_bucket|_count|_sum)?[{ ]/gm)) exported.add(match[1]);
    }
    expect(dashboard.panels.length).toBeGreaterThanOrEqual(8);
    for (const panel of dashboard.panels) {
      for (const { expr } of panel.targets) {
        const names = [...expr.matchAll(/\b([a-z][a-z0-9_]*_(?:total|seconds|bytes|subscriptions|up|in_flight|seconds_bucket|seconds_count|seconds_sum))\b/g)].map((match) =>
          match[1]!.replace(/_(bucket|count|sum)$/, ''),
        );
        expect(names.length, panel.title).toBeGreaterThan(0);
        for (const name of names) expect(exported, `${panel.title}: ${name}`).toContain(name);
      }
    }
  });
});
