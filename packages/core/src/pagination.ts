import { badUserInput } from './errors.js';

/** Largest page any list field returns. */
export const MAX_PAGE_SIZE = 100;

/** Validates a page-size argument (limit, first, last): a whole number from 0 to MAX_PAGE_SIZE. */
export function pageSize(value: number, argument: string): number {
  if (!Number.isInteger(value) || value < 0 || value > MAX_PAGE_SIZE) {
    throw badUserInput(`${argument} must be between 0 and ${MAX_PAGE_SIZE}`, { argument, max: MAX_PAGE_SIZE });
  }
  return value;
}

export function pageOffset(value: number, argument = 'offset'): number {
  if (!Number.isInteger(value) || value < 0) throw badUserInput(`${argument} must not be negative`, { argument });
  return value;
}
