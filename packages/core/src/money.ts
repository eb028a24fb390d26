// Money is stored as integer cents and exposed as Float so sums never drift.
import { badUserInput } from './errors.js';

/** Largest accepted price: one million in the currency's major unit. */
const MAX_PRICE_CENTS = 100_000_000;

export const centsToAmount = (cents: number): number => cents / 100;

/** Converts a client-supplied price to cents: positive, at most two decimals, at most MAX_PRICE_CENTS. */
export function amountToCents(amount: number, field: string): number {
  const cents = Math.round(amount * 100);
  if (!Number.isFinite(amount) || Math.abs(cents - amount * 100) > 1e-6 || cents <= 0 || cents > MAX_PRICE_CENTS) {
    throw badUserInput(`${field} must be a positive amount with at most two decimals, up to ${MAX_PRICE_CENTS / 100}`, { field });
  }
  return cents;
}
