import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor, fromGlobalId, localIdOf, toGlobalId } from '../src/ids.js';

describe('global IDs', () => {
  it('round-trip a type and local id as base64url', () => {
    const id = toGlobalId('Order', 'order-0001');
    expect(id).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(fromGlobalId(id)).toEqual({ type: 'Order', localId: 'order-0001' });
    expect(localIdOf('Order', id)).toBe('order-0001');
    expect(localIdOf('User', id)).toBeNull();
  });

  it.each(['', 'not base64!', toGlobalId('lower', 'x'), Buffer.from('NoColon').toString('base64url'), Buffer.from('User:').toString('base64url'), 'x'.repeat(600)])(
    'reject %j',
    (id) => {
      expect(fromGlobalId(id)).toBeNull();
    },
  );
});

describe('cursors', () => {
  it('round-trip a keyset position', () => {
    const position = { createdAt: new Date('2026-01-02T03:04:05.678Z'), id: 'user-0003' };
    expect(decodeCursor(encodeCursor(position))).toEqual(position);
  });

  it.each(['', '%%%', Buffer.from('{"a":1}').toString('base64url'), Buffer.from('["nope","x"]').toString('base64url')])('reject %j', (cursor) => {
    expect(decodeCursor(cursor)).toBeNull();
  });
});
