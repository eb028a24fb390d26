import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** One registry per process (or per in-process service in tests), with Node's default metrics. */
export function createMetricsRegistry(service: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  return registry;
}

export function datastoreOperationsCounter(registry: Registry): Counter<'collection' | 'operation'> {
  return new Counter({
    name: 'datastore_operations_total',
    help: 'Datastore operations by collection and operation; a request costs a bounded number of them',
    labelNames: ['collection', 'operation'],
    registers: [registry],
  });
}

/** `extraLabels`: what a process labels its requests with besides (the gateway: the client's name and version). */
export function graphqlRequestHistogram<Extra extends string = never>(registry: Registry, extraLabels: readonly Extra[] = []): Histogram<'operation' | 'status' | Extra> {
  return new Histogram({
    name: 'graphql_request_duration_seconds',
    help: 'GraphQL request duration by operation name and outcome',
    labelNames: ['operation', 'status', ...extraLabels],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
}
