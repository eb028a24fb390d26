// The new-user rules on their own, at and past each limit; the subgraph test covers them through GraphQL.
import { describe, expect, it } from 'vitest';
import { MAX_EMAIL_LENGTH, MAX_NAME_LENGTH, validateNewUser } from '../src/domain/users.js';

function refusal(input: { email: string; name: string }) {
  try {
    validateNewUser(input);
    return null;
  } catch (error) {
    const { code, field } = (error as { extensions: { code: string; field: string } }).extensions;
    return { code, field };
  }
}

const address = (length: number) => `${'a'.repeat(length - '@example.com'.length)}@example.com`;

describe('validateNewUser', () => {
  it('accepts a plain address and name, and each field at its limit', () => {
    expect(refusal({ email: 'ada@example.com', name: 'Ada' })).toBeNull();
    expect(refusal({ email: address(MAX_EMAIL_LENGTH), name: 'n'.repeat(MAX_NAME_LENGTH) })).toBeNull();
  });

  it.each([
    ['no at sign', { email: 'ada.example.com', name: 'Ada' }, 'email'],
    ['no domain dot', { email: 'ada@example', name: 'Ada' }, 'email'],
    ['a space inside', { email: 'ad a@example.com', name: 'Ada' }, 'email'],
    ['an address one past the limit', { email: address(MAX_EMAIL_LENGTH + 1), name: 'Ada' }, 'email'],
    ['a blank name', { email: 'ada@example.com', name: '   ' }, 'name'],
    ['a name one past the limit', { email: 'ada@example.com', name: 'n'.repeat(MAX_NAME_LENGTH + 1) }, 'name'],
  ])('refuses %s as BAD_USER_INPUT on its field', (_case, input, field) => {
    expect(refusal(input)).toEqual({ code: 'BAD_USER_INPUT', field });
  });
});
