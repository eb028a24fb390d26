// The new-user rules on their own, at and past each limit; the subgraph test covers them through GraphQL.
import { describe, expect, it, vi } from 'vitest';
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
    ['a NUL in the name', { email: 'ada@example.com', name: 'Ada\u0000Lovelace' }, 'name'],
    ['a line break in the name', { email: 'ada@example.com', name: 'Ada\nLovelace' }, 'name'],
    ['an escape sequence in the name', { email: 'ada@example.com', name: '\u001b[31mAda' }, 'name'],
    ['a C1 control character in the name', { email: 'ada@example.com', name: 'Ada\u0085' }, 'name'],
    ['a NUL in the email', { email: 'ada\u0000@example.com', name: 'Ada' }, 'email'],
    ['a DEL in the email', { email: 'ada@exa\u007fmple.com', name: 'Ada' }, 'email'],
  ])('refuses %s as BAD_USER_INPUT on its field', (_case, input, field) => {
    expect(refusal(input)).toEqual({ code: 'BAD_USER_INPUT', field });
  });

  it('checks the length before the address pattern: a 128 KB address is refused without running the pattern', () => {
    const huge = `${'a'.repeat(128 * 1024)}@example.com`;
    const test = vi.spyOn(RegExp.prototype, 'test');
    try {
      expect(refusal({ email: huge, name: 'Ada' })).toEqual({ code: 'BAD_USER_INPUT', field: 'email' });
      expect(test).not.toHaveBeenCalled();
    } finally {
      test.mockRestore();
    }
  });
});
