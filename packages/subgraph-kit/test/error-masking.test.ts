import { GraphQLError } from 'graphql';
import { describe, expect, it } from 'vitest';
import { notFound } from '@ordergraph/core';
import { createErrorMasker } from '../src/error-masking.js';

describe('error masking', () => {
  const masked: unknown[] = [];
  const format = createErrorMasker((error) => masked.push(error));

  it('keeps errors raised on purpose, without a stacktrace', () => {
    const error = notFound('User', 'VXNlcjox');
    const formatted = format({ message: error.message, extensions: { ...error.extensions, stacktrace: ['at x'] } }, error);
    expect(formatted).toEqual({
      message: 'User with id VXNlcjox not found',
      extensions: { code: 'NOT_FOUND', resource: 'User', id: 'VXNlcjox' },
    });
  });

  it('masks anything else as INTERNAL_SERVER_ERROR and hands the original to the logger', () => {
    const cause = new Error('connection refused 10.0.0.3:27017');
    const wrapped = new GraphQLError(cause.message, { originalError: cause, path: ['user'] });
    const formatted = format({ message: cause.message, path: ['user'], extensions: { code: 'INTERNAL_SERVER_ERROR', stacktrace: ['at y'] } }, wrapped);
    expect(formatted).toEqual({ message: 'Internal server error', path: ['user'], extensions: { code: 'INTERNAL_SERVER_ERROR' } });
    expect(masked).toContain(cause);
  });

  it('masks a field error whose root is not a GraphQLError, even with a public code', () => {
    const cause = Object.assign(new Error('secret detail'), { extensions: { code: 'NOT_FOUND' } });
    const wrapped = new GraphQLError('secret detail', { originalError: cause, path: ['user'] });
    const formatted = format({ message: 'secret detail', path: ['user'], extensions: { code: 'NOT_FOUND' } }, wrapped);
    expect(formatted.message).toBe('Internal server error');
  });

  it('keeps request errors such as a variable that failed coercion', () => {
    const cause = new TypeError('Invalid URL');
    const error = new GraphQLError('Variable "$url" got invalid value "x"; Invalid URL', { originalError: cause });
    const formatted = format({ message: error.message, extensions: { code: 'BAD_USER_INPUT' } }, error);
    expect(formatted).toEqual({ message: error.message, extensions: { code: 'BAD_USER_INPUT' } });
  });
});
