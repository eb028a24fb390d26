// The rules a new user must meet, checked before the store is asked; pure so they can be tested without a database.
import { badUserInput } from '@ordergraph/core';

/** Longest address SMTP allows (RFC 5321 path limit). */
export const MAX_EMAIL_LENGTH = 254;
export const MAX_NAME_LENGTH = 200;
/** Something@something.tld with no spaces: deliverability is the mail server's business, not ours. */
const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
/** C0 and C1 control characters and DEL (NUL included): never part of a name or an address, trouble in logs and mails. */
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * Throws BAD_USER_INPUT naming the first field that breaks a rule. Cheap checks first: lengths before any pattern,
 * so an oversized value costs nothing however it is made.
 */
export function validateNewUser(input: { email: string; name: string }): void {
  if (input.email.length > MAX_EMAIL_LENGTH || CONTROL_CHARACTERS.test(input.email) || !EMAIL_PATTERN.test(input.email.trim())) {
    throw badUserInput('email must be a valid address', { field: 'email' });
  }
  if (input.name.length > MAX_NAME_LENGTH || input.name.trim().length === 0) {
    throw badUserInput(`name must be 1 to ${MAX_NAME_LENGTH} characters`, { field: 'name' });
  }
  if (CONTROL_CHARACTERS.test(input.name)) throw badUserInput('name must not contain control characters', { field: 'name' });
}
