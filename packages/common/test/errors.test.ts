import { GraphQLError } from 'graphql';
import { describe, expect, it } from 'vitest';
import { createErrorMasker, notFound } from '../src/errors.js';

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

  it('masks an internal error that borrowed a public code', () => {
    const cause = Object.assign(new Error('secret detail'), { extensions: { code: 'NOT_FOUND' } });
    const formatted = format({ message: 'secret detail', extensions: { code: 'NOT_FOUND' } }, new GraphQLError('secret detail', { originalError: cause }));
    expect(formatted.message).toBe('Internal server error');
  });
});
