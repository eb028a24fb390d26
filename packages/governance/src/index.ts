export * from './baseline.js';
export * from './check.js';
export * from './report.js';
export * from './schema.js';
export * from './versioning.js';
export * from './commands.js';
export * from './operations.js';
