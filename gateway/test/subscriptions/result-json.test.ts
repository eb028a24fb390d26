// A subscription event's JSON, as every transport writes it: once per event object, and without yoga's internals.
import { describe, expect, it } from 'vitest';
import { GraphQLError } from 'graphql';
import { createWebSocketFormatter, createErrorPolicy } from '../../src/security/errors.js';
import { resultJson } from '../../src/subscriptions/result-json.js';

describe('resultJson', () => {
  it('serialises an event once, however many subscribers write it', () => {
    const event = { data: { newOrderCreated: { id: 'T3JkZXI6MQ==', createdAt: '2026-11-25T00:00:00.000Z' } } };
    const first = resultJson(event);
    expect(first).toBe(JSON.stringify(event));
    const stringify = JSON.stringify;
    let calls = 0;
    JSON.stringify = ((...args: Parameters<typeof stringify>) => (calls++, stringify(...args))) as typeof stringify;
    try {
      for (let subscriber = 0; subscriber < 100; subscriber++) expect(resultJson(event)).toBe(first);
    } finally {
      JSON.stringify = stringify;
    }
    expect(calls).toBe(0);
    // Another event, even an equal one, is another object: serialised on its own.
    expect(resultJson({ ...event })).toBe(first);
  });

  it('leaves out yoga\'s internal extensions, of the result and of its errors', () => {
    const event = {
      data: null,
      errors: [new GraphQLError('Unavailable', { path: ['newOrderCreated'], extensions: { code: 'SUBGRAPH_UNAVAILABLE', http: { status: 503 }, unexpected: true } })],
      extensions: { http: { status: 503 } },
    };
    expect(JSON.parse(resultJson(event))).toEqual({ data: null, errors: [{ message: 'Unavailable', path: ['newOrderCreated'], extensions: { code: 'SUBGRAPH_UNAVAILABLE' } }] });
  });

  it('is what a WebSocket subscriber receives of an event the formatter leaves as it is', () => {
    const { formatResult } = createWebSocketFormatter(createErrorPolicy({ production: true }));
    const event = { data: { newOrderCreated: { id: 'T3JkZXI6Mg==' } } };
    expect(formatResult(event, 'request-1')).toBe(event);
    expect(formatResult({ ...event, errors: [new GraphQLError('x', { extensions: { code: 'FORBIDDEN' } })] }, 'request-1')).not.toBe(event);
  });
});
