// Every query the API offers, at size: the three subgraphs on the embedded store seeded at SEED_SCALE (100 unless set:
// 100,000 orders), each case of testkit's API_CASES sent to the subgraph that serves it. Asserts that no store query
// of any case scans a collection or reads more than a bounded number of documents, and prints the p50/p99 it saw
// (timings are printed, never asserted). Fails when schemas/api.graphql gains a field without a case.
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildSchema, isObjectType } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '@ordergraph/composition';
import { createLogger } from '@ordergraph/core';
import type { StoreQueryEvent } from '@ordergraph/store';
import type { SubgraphModule, SubgraphService } from '@ordergraph/subgraph-kit';
import { API_CASES, MEASURED_ELSEWHERE, caseRunner, percentile, type CaseRunner, type SubgraphName } from '@ordergraph/testkit';
import { subgraph as catalog } from '@ordergraph/catalog';
import { subgraph as orders } from '@ordergraph/orders';
import { subgraph as users } from '@ordergraph/users';

const SCALE = Number(process.env['SEED_SCALE'] || 100);
const ITERATIONS = 30;
/** Documents one store query may read: a search ranks at most 500 candidates; everything else reads its page. */
const MAX_DOCS_EXAMINED = 1000;

/** Every field of schemas/api.graphql's object types, and whether a case must measure it. */
function apiFields(): { field: string; required: boolean }[] {
  const schema = buildSchema(readFileSync(join(REPO_ROOT, 'schemas/api.graphql'), 'utf8'));
  const roots = new Set([schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()].flatMap((type) => (type ? [type.name] : [])));
  return Object.values(schema.getTypeMap())
    .filter(isObjectType)
    .filter((type) => !type.name.startsWith('__'))
    .flatMap((type) => Object.values(type.getFields()).map((field) => ({ field: `${type.name}.${field.name}`, required: roots.has(type.name) || field.args.length > 0 })));
}

describe('every query the API offers has a case', () => {
  it('measures each root field and each field taking arguments of schemas/api.graphql, and no field it lacks', () => {
    const covered = new Set([...API_CASES.map((apiCase) => apiCase.field), ...Object.keys(MEASURED_ELSEWHERE)]);
    const fields = apiFields();
    expect(fields.filter(({ field, required }) => required && !covered.has(field)).map(({ field }) => field), 'fields without a case in testkit/src/api-queries.ts').toEqual([]);
    expect([...covered].filter((field) => !fields.some((known) => known.field === field)), 'cases of fields the API does not have').toEqual([]);
  });
});

describe(`every query the API offers at SEED_SCALE=${SCALE}`, () => {
  const services: SubgraphService[] = [];
  let runner: CaseRunner;
  let recording: StoreQueryEvent[] | undefined;
  const record = (event: unknown) => recording?.push(event as StoreQueryEvent);
  const report: string[] = [];

  beforeAll(async () => {
    const start = async <C,>(name: SubgraphName, module: SubgraphModule<C>, env: Record<string, string>) => {
      const config = module.loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'silent', SEED: 'true', SEED_SCALE: String(SCALE), ...env });
      const service = await module.create(config, createLogger(name, 'silent'));
      services.push(service);
      return service.listen(0, '127.0.0.1');
    };
    const catalogUrl = await start('catalog', catalog, {});
    const ordersUrl = await start('orders', orders, { CATALOG_URL: catalogUrl });
    const usersUrl = await start('users', users, { ORDERS_URL: ordersUrl, CATALOG_URL: catalogUrl });
    runner = await caseRunner({ users: usersUrl, orders: ordersUrl, catalog: catalogUrl }, SCALE);
    subscribe('ordergraph:store:query', record);
  }, 300_000);

  afterAll(async () => {
    unsubscribe('ordergraph:store:query', record);
    for (const service of services.reverse()) await service.stop();
    console.log(`p50 / p99 at the subgraph, SEED_SCALE=${SCALE}, ${ITERATIONS} requests each (informational):\n${report.join('\n')}`);
  });

  it.each(API_CASES.map((apiCase) => [`${apiCase.field}: ${apiCase.label}`, apiCase] as const))('%s reads through an index', async (_name, apiCase) => {
    for (let i = 0; i < 3; i++) await runner.run(apiCase);
    const times: number[] = [];
    const events: StoreQueryEvent[] = (recording = []);
    try {
      for (let i = 0; i < ITERATIONS; i++) times.push(await runner.run(apiCase));
    } finally {
      recording = undefined;
    }
    const scans = events.filter((event) => event.plan.index === null).map((event) => `${event.collection} ${event.operation} ${JSON.stringify(event.filter)}`);
    expect(scans, 'store queries that scanned a collection').toEqual([]);
    const heavy = events.filter((event) => event.plan.docsExamined > MAX_DOCS_EXAMINED).map((event) => `${event.collection} ${JSON.stringify(event.filter)}: ${event.plan.docsExamined}`);
    expect(heavy, `store queries reading more than ${MAX_DOCS_EXAMINED} documents`).toEqual([]);
    const examined = Math.max(0, ...events.map((event) => event.plan.docsExamined));
    const indexes = [...new Set(events.map((event) => `${event.collection}.${event.plan.index}`))].join(', ');
    report.push(`  ${`${apiCase.field}: ${apiCase.label}`.padEnd(88)} ${percentile(times, 0.5).toFixed(1).padStart(6)} / ${percentile(times, 0.99).toFixed(1).padStart(6)} ms  (${indexes || 'no query'}; at most ${examined} documents read)`);
  });
});
