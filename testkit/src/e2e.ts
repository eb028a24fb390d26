// The whole supergraph for end-to-end suites and the bench: in-process, as processes, as replicas, or behind Apollo's
// gateway. A subpath of its own, so unit and subgraph tests that import the test kit do not load every service.
export * from './apollo-gateway.js';
export * from './processes.js';
export * from './replicas.js';
export * from './supergraph.js';
export * from './consistency-workload.js';
