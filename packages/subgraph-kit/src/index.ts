export * from './error-masking.js';
export * from './peer.js';
export * from './search.js';
export * from './signature.js';
export * from './subgraph.js';
export * from './subgraph-subscriptions.js';
