export * from './backends.js';
export * from './http.js';
