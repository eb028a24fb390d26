// How the embedded store reads a filter as index bounds: equalities, `$in` lists and ranges on top-level fields, the
// rest left to evaluation. MongoDB's planner reads the same documents the same way, so the same indexes serve both.
import type { Filter } from './types.js';

export type Scalar = string | number | boolean;
/** A value an index orders by: a scalar, a Date or null (a missing field indexes as null, as in MongoDB). */
export type KeyValue = Scalar | Date | null;

/** One end of a range: a value, or the edge of a type's values (MongoDB brackets `$gt: date` to dates). */
export class TypeEdge {
  constructor(
    readonly rank: number,
    readonly side: 'min' | 'max',
  ) {}
}
export type KeyPart = KeyValue | TypeEdge;

/**
 * MongoDB's order of types: null (and missing) < numbers < strings < objects < arrays < booleans < dates. A bigint is
 * how the embedded store holds a top-level Date (milliseconds since the epoch), a quarter of a Date object's size.
 */
export function typeRank(value: unknown): number {
  if (value === null || value === undefined) return 1;
  if (typeof value === 'number') return 2;
  if (typeof value === 'string') return 3;
  if (typeof value === 'boolean') return 8;
  if (value instanceof Date || typeof value === 'bigint') return 9;
  if (Array.isArray(value)) return 5;
  return 4;
}

/** Whether an index can hold the value under its own position (arrays and documents it cannot). */
export const isKeyValue = (value: unknown): value is KeyValue | undefined => typeRank(value) !== 4 && typeRank(value) !== 5 && !(typeof value === 'number' && Number.isNaN(value));

const millis = (value: Date | bigint): number => (typeof value === 'bigint' ? Number(value) : value.getTime());

/** Compares a stored value with a key part in MongoDB's order. */
export function compareKey(value: unknown, part: unknown): number {
  // The common case first: two strings, two dates held as bigints, two numbers (NaN is never a key).
  const kind = typeof value;
  if (kind === typeof part && (kind === 'string' || kind === 'bigint' || kind === 'number')) return (value as string) < (part as string) ? -1 : (value as string) > (part as string) ? 1 : 0;
  if (part instanceof TypeEdge) {
    const rank = typeRank(value);
    return rank !== part.rank ? rank - part.rank : part.side === 'min' ? 1 : -1;
  }
  const a = typeRank(value);
  const b = typeRank(part);
  if (a !== b) return a - b;
  switch (a) {
    case 1:
      return 0;
    case 9:
      return millis(value as Date | bigint) - millis(part as Date | bigint);
    case 8:
      return Number(value) - Number(part);
    default:
      return (value as string | number) < (part as string | number) ? -1 : (value as string | number) > (part as string | number) ? 1 : 0;
  }
}

export interface Range {
  /** The one type of value the range holds (MongoDB brackets a range to the type of its bounds). */
  rank: number;
  low: KeyPart;
  lowInclusive: boolean;
  high: KeyPart;
  highInclusive: boolean;
}

/** What a filter asks of each top-level field, as far as an index can answer it. */
export interface Conditions {
  /** Field -> the values it must equal (one for an equality, several for `$in`). */
  equal: Map<string, KeyValue[]>;
  /** Field -> the range it must lie in. */
  range: Map<string, Range>;
  /** Field -> values every one of which an array field must hold (`$all`, or an equality on a multikey field). */
  all: Map<string, Scalar[]>;
  /** Conditions no bound expresses (`$or`, `$expr`, a second condition on a field...): evaluated on each candidate. */
  residual: boolean;
}

const RANGE_OPERATORS = new Set(['$gt', '$gte', '$lt', '$lte']);
const isBoundValue = (value: unknown): value is KeyValue => value === null || (isKeyValue(value) && value !== undefined);

function tighten(range: Range | undefined, operator: string, value: KeyValue): Range {
  const rank = typeRank(value);
  const current = range ?? { rank, low: new TypeEdge(rank, 'min'), lowInclusive: true, high: new TypeEdge(rank, 'max'), highInclusive: true };
  if (operator === '$gt' || operator === '$gte') {
    const order = compareKey(value, current.low);
    if (order > 0 || (order === 0 && operator === '$gt')) return { ...current, low: value, lowInclusive: operator === '$gte' };
  } else {
    const order = compareKey(value, current.high);
    if (order < 0 || (order === 0 && operator === '$lt')) return { ...current, high: value, highInclusive: operator === '$lte' };
  }
  return current;
}

/** Reads `filter` into bounds; anything it cannot read sets `residual`, so evaluation decides. */
export function analyze(filter: Filter, conditions: Conditions = { equal: new Map(), range: new Map(), all: new Map(), residual: false }): Conditions {
  for (const [field, condition] of Object.entries(filter)) {
    if (field === '$and' && Array.isArray(condition)) {
      for (const part of condition) analyze(part as Filter, conditions);
      continue;
    }
    if (field.startsWith('$') || field.includes('.')) {
      conditions.residual = true;
      continue;
    }
    const taken = conditions.equal.has(field) || conditions.all.has(field);
    if (isBoundValue(condition)) {
      if (taken || conditions.range.has(field)) conditions.residual = true;
      else conditions.equal.set(field, [condition]);
      continue;
    }
    if (typeof condition !== 'object' || condition === null || Array.isArray(condition) || condition instanceof Date) {
      conditions.residual = true;
      continue;
    }
    const operators = Object.entries(condition as Record<string, unknown>);
    if (operators.length === 1 && operators[0]![0] === '$in' && Array.isArray(operators[0]![1]) && operators[0]![1].every(isBoundValue) && !taken && !conditions.range.has(field)) {
      conditions.equal.set(field, [...new Set(operators[0]![1] as KeyValue[])]);
    } else if (operators.length === 1 && operators[0]![0] === '$eq' && isBoundValue(operators[0]![1]) && !taken && !conditions.range.has(field)) {
      conditions.equal.set(field, [operators[0]![1]]);
    } else if (operators.length === 1 && operators[0]![0] === '$all' && Array.isArray(operators[0]![1]) && operators[0]![1].length > 0 && operators[0]![1].every((v) => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') && !taken) {
      conditions.all.set(field, operators[0]![1] as Scalar[]);
    } else if (operators.length > 0 && !taken && operators.every(([operator, value]) => RANGE_OPERATORS.has(operator) && value !== null && isBoundValue(value))) {
      let range = conditions.range.get(field);
      // A range mixing types (a date and a number) is left to evaluation rather than bracketed here.
      const ranks = new Set([...operators.map(([, value]) => typeRank(value)), ...(range ? [range.rank] : [])]);
      if (ranks.size > 1) {
        conditions.residual = true;
        continue;
      }
      for (const [operator, value] of operators) range = tighten(range, operator, value as KeyValue);
      conditions.range.set(field, range!);
    } else {
      conditions.residual = true;
    }
  }
  return conditions;
}
