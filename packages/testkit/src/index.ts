export * from './backends.js';
export * from './heap.js';
export * from './http.js';
export * from './identity-provider.js';
export * from './redis.js';
export * from './subscriptions.js';
export * from './browser.js';
export * from './redis-topologies.js';
