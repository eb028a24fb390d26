// The rules a new user must meet, checked before the store is asked; pure so they can be tested without a database.
import { badUserInput } from '@ordergraph/common';

/** Longest address SMTP allows (RFC 5321 path limit). */
export const MAX_EMAIL_LENGTH = 254;
export const MAX_NAME_LENGTH = 200;
/** Something@something.tld with no spaces: deliverability is the mail server's business, not ours. */
const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** Throws BAD_USER_INPUT naming the first field that breaks a rule. */
export function validateNewUser(input: { email: string; name: string }): void {
  if (!EMAIL_PATTERN.test(input.email.trim()) || input.email.length > MAX_EMAIL_LENGTH) {
    throw badUserInput('email must be a valid address', { field: 'email' });
  }
  if (input.name.trim().length === 0 || input.name.length > MAX_NAME_LENGTH) {
    throw badUserInput(`name must be 1 to ${MAX_NAME_LENGTH} characters`, { field: 'name' });
  }
}
