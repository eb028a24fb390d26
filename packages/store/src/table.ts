// The embedded store's documents, held column by column: a row per document, each field in a column typed by what it
// holds (integers, other numbers and dates in typed arrays, ids such as `order-0042` as their number, arrays of
// documents as rows of a nested table), so a million orders are a few typed arrays rather than millions of objects.
import { compareKey, isKeyValue } from './plan.js';
import type { Doc } from './types.js';

/**
 * A deep copy, as structuredClone makes it but several times faster for what documents hold (plain objects, arrays,
 * Dates, plain values); anything else (a Map, a Buffer, an own `__proto__` key) goes to structuredClone itself.
 */
export function clone<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map(clone) as T;
  if (value instanceof Date) return new Date(value.getTime()) as T;
  if (!isPlainObject(value)) return structuredClone(value);
  const copy: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  for (const key in copy) {
    const field = copy[key];
    if (typeof field === 'object' && field !== null) copy[key] = clone(field);
  }
  return copy as T;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype && !Object.hasOwn(value, '__proto__');
const isInt32 = (value: unknown): value is number => typeof value === 'number' && (value | 0) === value && !Object.is(value, -0);
const isDate = (value: unknown): value is Date => value instanceof Date && Object.getPrototypeOf(value) === Date.prototype && !Number.isNaN(value.getTime());

/** A string ending in a number, written back exactly: `order-0042` is `order-` and 42 at four digits. */
const NUMBERED = /^(\D*)(\d{1,9})$/;

/**
 * A growable typed array in pages of 65,536 entries: no page is ever copied once full, so a column grows without
 * holding its old and new arrays at once, and never holds more than one page it does not use. A first page grows by
 * doubling, so a table of a few rows holds a few bytes.
 */
class Pages<A extends Int32Array | Float64Array | Uint16Array> {
  private pages: A[] = [];
  private capacity = 0;

  constructor(private readonly make: (length: number) => A) {}

  get(i: number): number {
    return this.pages[i >>> PAGE_BITS]![i & PAGE_MASK]!;
  }

  set(i: number, value: number): void {
    this.pages[i >>> PAGE_BITS]![i & PAGE_MASK] = value;
  }

  reserve(length: number): void {
    if (length <= this.capacity) return;
    if (this.pages.length <= 1 && length <= PAGE) {
      const page = this.make(Math.min(PAGE, Math.max(16, 2 * length)));
      if (this.pages[0]) page.set(this.pages[0]);
      this.pages[0] = page;
      this.capacity = page.length;
      return;
    }
    if (this.pages[0] && this.pages[0].length < PAGE) {
      const page = this.make(PAGE);
      page.set(this.pages[0]);
      this.pages[0] = page;
    }
    while (this.pages.length * PAGE < length) this.pages.push(this.make(PAGE));
    this.capacity = this.pages.length * PAGE;
  }
}
const PAGE_BITS = 16;
const PAGE = 1 << PAGE_BITS;
const PAGE_MASK = PAGE - 1;
const int32s = () => new Pages((length) => new Int32Array(length));
const float64s = () => new Pages((length) => new Float64Array(length));

const POWERS = [1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10];
const digits = (n: number): number =>
  n < 1e4 ? (n < 10 ? 1 : n < 100 ? 2 : n < 1e3 ? 3 : 4) : n < 1e6 ? (n < 1e5 ? 5 : 6) : n < 1e8 ? (n < 1e7 ? 7 : 8) : n < 1e9 ? 9 : 10;

/** The order of two numbered strings of one prefix and width, as strings, without writing them out. */
function compareNumbered(a: number, b: number, width: number): number {
  if (a === b) return 0;
  const la = Math.max(width, digits(a));
  const lb = Math.max(width, digits(b));
  if (la === lb) return a < b ? -1 : 1;
  // The shorter is compared with the longer's leading digits; a prefix of the other comes first.
  if (la < lb) {
    const head = Math.floor(b / POWERS[lb - la]!);
    return a <= head ? -1 : 1;
  }
  const head = Math.floor(a / POWERS[la - lb]!);
  return head < b ? -1 : 1;
}

type Kind = 'empty' | 'int' | 'number' | 'date' | 'numbered' | 'code' | 'list' | 'any';

/**
 * One field of every row. Its kind is chosen by the first value and widened when a value does not fit (an integer
 * column meeting a fraction holds doubles; anything meeting a value of another type holds values as they are).
 */
export class Column {
  kind: Kind = 'empty';
  /**
   * int, numbered: the value (numbered: -1 for a row in `exceptions`); code: the string's number in `strings`; list:
   * where the row's elements start.
   */
  private ints = int32s();
  /** number, date (milliseconds). */
  private floats = float64s();
  /** list: how many elements the row has. */
  private lengths = int32s();
  private values: unknown[] = [];
  /** Numbered strings: the text before the number, the digits it is padded to, and rows holding other strings. */
  private prefix = '';
  private width = 1;
  private exceptions = new Map<number, string>();
  /** Strings of a `code` column, each held once, and how many times one was written again. */
  private strings: string[] = [];
  private codes = new Map<string, number>();
  private repeats = 0;
  /** The last string compared with, as a number (-1 when not of this column's form): a search compares one many times. */
  private part: string | undefined;
  private partNumber = -1;
  /** Lists: each row's elements are rows [start, start + length) of `child`; `scalars` when they are not documents. */
  private child: Table | undefined;
  private scalars = false;
  /** Per shape id of the table: whether rows of that shape hold this field. */
  inShape = new Uint8Array(0);
  /** Every row holds this field (every shape so far has it): the common case, answered without a lookup. */
  everywhere = true;

  constructor(
    private readonly table: Table,
    readonly name: string,
  ) {}

  present(row: number): boolean {
    return this.everywhere || this.inShape[this.table.shapeAt(row)] === 1;
  }

  private fits(value: unknown): boolean {
    switch (this.kind) {
      case 'empty':
        return false;
      case 'int':
        return isInt32(value);
      case 'number':
        return typeof value === 'number';
      case 'date':
        return isDate(value);
      case 'numbered':
      case 'code':
        return typeof value === 'string';
      case 'list':
        return this.listable(value, this.scalars);
      case 'any':
        return true;
    }
  }

  private listable(value: unknown, scalars: boolean): value is unknown[] {
    if (!Array.isArray(value)) return false;
    for (let i = 0; i < value.length; i++) {
      if (!(i in value)) return false;
      const element = value[i];
      if (scalars ? typeof element === 'object' && element !== null : !isPlainObject(element)) return false;
    }
    return true;
  }

  /** Moves to a kind that holds `value` as well as every value held so far. */
  private widen(value: unknown): void {
    if (this.kind === 'empty') {
      if (isInt32(value)) this.kind = 'int';
      else if (typeof value === 'number') this.kind = 'number';
      else if (isDate(value)) this.kind = 'date';
      else if (typeof value === 'string' && NUMBERED.test(value)) {
        const [, prefix, number] = NUMBERED.exec(value)!;
        this.kind = 'numbered';
        this.prefix = prefix!;
        this.width = number!.length > 1 && number!.startsWith('0') ? number!.length : 1;
      } else if (typeof value === 'string') this.kind = 'code';
      else if (Array.isArray(value) && value.length > 0 && (this.listable(value, false) || this.listable(value, true))) {
        this.kind = 'list';
        this.scalars = !this.listable(value, false);
        this.child = new Table();
      } else this.kind = 'any';
      return;
    }
    if (this.kind === 'int' && typeof value === 'number') {
      const floats = float64s();
      floats.reserve(this.table.size);
      for (let row = 0; row < this.table.size; row++) if (this.present(row)) floats.set(row, this.ints.get(row));
      this.floats = floats;
      this.ints = int32s();
      this.kind = 'number';
      return;
    }
    this.toAny();
  }

  private toAny(): void {
    const values: unknown[] = [];
    for (let row = 0; row < this.table.size; row++) values.push(this.present(row) ? this.get(row) : undefined);
    this.reset('any');
    this.values = values;
  }

  /** Numbered strings too many of which are of another form: every string held once instead. */
  private toCode(): void {
    const values: unknown[] = [];
    for (let row = 0; row < this.table.size; row++) values.push(this.present(row) ? this.get(row) : undefined);
    this.reset('code');
    for (let row = 0; row < this.table.size; row++) if (this.present(row)) this.set(row, values[row]);
  }

  private reset(kind: Kind): void {
    this.ints = int32s();
    this.floats = float64s();
    this.lengths = int32s();
    this.exceptions = new Map();
    this.strings = [];
    this.codes = new Map();
    this.repeats = 0;
    this.child = undefined;
    this.values = [];
    this.kind = kind;
  }

  /**
   * The number of a string in a `code` column, -1 once the column has proved to hold mostly distinct strings (an
   * email, say), which are kept as they are: a number and a table entry would cost more than the string alone.
   */
  private codeOf(value: string): number {
    let code = this.codes.get(value);
    if (code !== undefined) {
      this.repeats++;
      return code;
    }
    code = this.strings.length;
    // Past 65,536 strings, fewer than one write in sixteen repeating one: distinct strings, an email say.
    if (code >= 0x10000 && this.repeats < code / 16) return -1;
    this.strings.push(value);
    this.codes.set(value, code);
    return code;
  }

  /** Makes room for `row`, keeping an `any` column's array dense (a holey array is kept as a slower dictionary). */
  private reserve(row: number): void {
    switch (this.kind) {
      case 'int':
      case 'numbered':
      case 'code':
        return this.ints.reserve(row + 1);
      case 'number':
      case 'date':
        return this.floats.reserve(row + 1);
      case 'list':
        this.ints.reserve(row + 1);
        return this.lengths.reserve(row + 1);
      case 'any':
        while (this.values.length <= row) this.values.push(undefined);
        return;
      case 'empty':
    }
  }

  set(row: number, value: unknown): void {
    if (!this.fits(value)) this.widen(value);
    this.reserve(row);
    switch (this.kind) {
      case 'int':
        return this.ints.set(row, value as number);
      case 'number':
        return this.floats.set(row, value as number);
      case 'date':
        return this.floats.set(row, (value as Date).getTime());
      case 'numbered': {
        const n = this.parse(value as string);
        if (n >= 0) {
          this.ints.set(row, n);
          if (this.exceptions.size > 0) this.exceptions.delete(row);
          return;
        }
        this.ints.set(row, -1);
        this.exceptions.set(row, value as string);
        if (this.exceptions.size > 1024 && this.exceptions.size > this.table.size / 8) this.toCode();
        return;
      }
      case 'code': {
        const code = this.codeOf(value as string);
        if (code >= 0) return this.ints.set(row, code);
        this.toAny();
        this.values[row] = value;
        return;
      }
      case 'list': {
        const list = value as unknown[];
        const child = this.child!;
        child.garbage += this.lengths.get(row);
        this.ints.set(row, child.size);
        this.lengths.set(row, list.length);
        for (const element of list) {
          if (this.scalars) child.appendCell('', element);
          else child.append(element as Doc);
        }
        return;
      }
      case 'any':
        this.values[row] = clone(value);
        return;
      case 'empty':
    }
  }

  /** A row's field no longer held (its document lost the field): drops what it referenced. */
  clear(row: number): void {
    if (this.kind === 'any' && row < this.values.length) this.values[row] = undefined;
    else if (this.kind === 'numbered') this.exceptions.delete(row);
    else if (this.kind === 'list') {
      this.child!.garbage += this.lengths.get(row);
      this.lengths.set(row, 0);
    }
  }

  /** The number a string of this column's form stands for, or -1 when it is of another form. */
  private parse(value: string): number {
    const start = this.prefix.length;
    const length = value.length - start;
    if (length < this.width || length > 10 || !value.startsWith(this.prefix)) return -1;
    if (length > this.width && value.charCodeAt(start) === 48) return -1;
    let n = 0;
    for (let i = start; i < value.length; i++) {
      const digit = value.charCodeAt(i) - 48;
      if (digit < 0 || digit > 9) return -1;
      n = n * 10 + digit;
    }
    return n <= 0x7fffffff ? n : -1;
  }

  private format(n: number): string {
    return this.prefix + String(n).padStart(this.width, '0');
  }

  /** The value as callers see it: a copy sharing nothing with the store. */
  get(row: number): unknown {
    switch (this.kind) {
      case 'int':
        return this.ints.get(row);
      case 'number':
        return this.floats.get(row);
      case 'date':
        return new Date(this.floats.get(row));
      case 'numbered': {
        const n = this.ints.get(row);
        return n < 0 ? this.exceptions.get(row) : this.format(n);
      }
      case 'code':
        return this.strings[this.ints.get(row)];
      case 'list': {
        const start = this.ints.get(row);
        const end = start + this.lengths.get(row);
        const child = this.child!;
        const list: unknown[] = [];
        if (this.scalars) {
          // Every row of a list of plain values holds the one field ''.
          const values = child.column('');
          for (let i = start; i < end; i++) list.push(values.get(i));
        } else for (let i = start; i < end; i++) list.push(child.read(i));
        return list;
      }
      case 'any':
        return clone(this.values[row]);
      case 'empty':
        return undefined;
    }
  }

  /**
   * The value as indexes compare it, undefined when the row lacks the field: a date as a bigint of its milliseconds,
   * an `any` value as stored (not to be changed), a list as a fresh array.
   */
  key(row: number): unknown {
    if (!this.present(row)) return undefined;
    switch (this.kind) {
      case 'date':
        return BigInt(this.floats.get(row));
      case 'any':
        return this.values[row];
      default:
        return this.get(row);
    }
  }

  /** Whether an index can place the row's value (a scalar, a date, null or missing; not a list, document or NaN). */
  regular(row: number): boolean {
    if (!this.present(row)) return true;
    switch (this.kind) {
      case 'list':
        return false;
      case 'number':
        return !Number.isNaN(this.floats.get(row));
      case 'any':
        return isKeyValue(this.values[row]);
      default:
        return true;
    }
  }

  /** The row's value against a key part, in MongoDB's order. */
  compareTo(row: number, part: unknown): number {
    if (this.present(row)) {
      switch (this.kind) {
        case 'int':
        case 'number':
          if (typeof part === 'number') {
            const value = this.kind === 'int' ? this.ints.get(row) : this.floats.get(row);
            return value < part ? -1 : value > part ? 1 : 0;
          }
          break;
        case 'date':
          if (typeof part === 'bigint' || part instanceof Date) {
            const value = this.floats.get(row);
            const other = typeof part === 'bigint' ? Number(part) : part.getTime();
            return value < other ? -1 : value > other ? 1 : 0;
          }
          break;
        case 'numbered':
          if (typeof part === 'string') {
            if (part !== this.part) {
              this.part = part;
              this.partNumber = this.parse(part);
            }
            const n = this.ints.get(row);
            if (n >= 0 && this.partNumber >= 0) return compareNumbered(n, this.partNumber, this.width);
            const value = n < 0 ? this.exceptions.get(row)! : this.format(n);
            return value < part ? -1 : value > part ? 1 : 0;
          }
          break;
        case 'code':
          if (typeof part === 'string') {
            const value = this.strings[this.ints.get(row)]!;
            return value < part ? -1 : value > part ? 1 : 0;
          }
          break;
        case 'any': {
          const value = this.values[row];
          if (typeof value === 'string' && typeof part === 'string') return value < part ? -1 : value > part ? 1 : 0;
          return compareKey(value, part);
        }
        default:
      }
    }
    return compareKey(this.key(row), part);
  }

  /** Two rows' values in MongoDB's order. */
  compareRows(a: number, b: number): number {
    if (this.present(a) && this.present(b)) {
      switch (this.kind) {
        case 'int':
        case 'numbered': {
          const x = this.ints.get(a);
          const y = this.ints.get(b);
          if (this.kind === 'int') return x < y ? -1 : x > y ? 1 : 0;
          if (x >= 0 && y >= 0) return compareNumbered(x, y, this.width);
          break;
        }
        case 'code': {
          const x = this.strings[this.ints.get(a)]!;
          const y = this.strings[this.ints.get(b)]!;
          return x < y ? -1 : x > y ? 1 : 0;
        }
        case 'number':
        case 'date': {
          const x = this.floats.get(a);
          const y = this.floats.get(b);
          if (x === x && y === y) return x < y ? -1 : x > y ? 1 : 0;
          break;
        }
        case 'any': {
          const x = this.values[a];
          const y = this.values[b];
          if (typeof x === 'string' && typeof y === 'string') return x < y ? -1 : x > y ? 1 : 0;
          return compareKey(x, y);
        }
        default:
      }
    }
    return compareKey(this.key(a), this.key(b));
  }
}

interface Shape {
  keys: string[];
  columns: Column[];
}

/** Rows of documents, each with its own fields in its own order (its shape), held in shared columns. */
export class Table {
  size = 0;
  /** Rows of nested lists no row points at any longer (lists replaced by updates). */
  garbage = 0;
  private shapeOf: Pages<Uint16Array | Int32Array> = new Pages<Uint16Array | Int32Array>((length) => new Uint16Array(length));
  private readonly shapes: Shape[] = [];
  private readonly shapeIds = new Map<string, number>();
  private readonly columns = new Map<string, Column>();
  private lastShape = -1;

  shapeAt(row: number): number {
    return this.shapeOf.get(row);
  }

  /** The column of a field, made empty (held by no row) if no document has had it yet. */
  column(name: string): Column {
    let column = this.columns.get(name);
    if (!column) {
      column = new Column(this, name);
      column.everywhere = this.size === 0;
      column.inShape = new Uint8Array(Math.max(16, this.shapes.length));
      this.shapes.forEach((shape, id) => {
        if (shape.keys.includes(name)) column!.inShape[id] = 1;
      });
      this.columns.set(name, column);
    }
    return column;
  }

  private shapeOfKeys(keys: string[]): number {
    const last = this.shapes[this.lastShape];
    if (last && last.keys.length === keys.length && last.keys.every((key, i) => key === keys[i])) return this.lastShape;
    const name = keys.join('\u0000');
    let id = this.shapeIds.get(name);
    if (id === undefined) {
      id = this.shapes.length;
      if (id === 0xffff) {
        // Past 65,535 shapes a row's shape id takes four bytes.
        const wide = int32s();
        wide.reserve(this.size);
        for (let row = 0; row < this.size; row++) wide.set(row, this.shapeOf.get(row));
        this.shapeOf = wide;
      }
      const columns = keys.map((key) => this.column(key));
      this.shapes.push({ keys, columns });
      this.shapeIds.set(name, id);
      for (const column of this.columns.values()) {
        if (column.inShape.length <= id) {
          const inShape = new Uint8Array(2 * (id + 1));
          inShape.set(column.inShape);
          column.inShape = inShape;
        }
      }
      for (const column of columns) column.inShape[id] = 1;
      for (const column of this.columns.values()) if (column.inShape[id] !== 1) column.everywhere = false;
    }
    this.lastShape = id;
    return id;
  }

  private newRow(): number {
    const row = this.size++;
    this.shapeOf.reserve(row + 1);
    return row;
  }

  /** Adds a document as a new row (copying what it holds) and returns the row. */
  append(doc: Doc): number {
    const row = this.newRow();
    this.write(row, doc, true);
    return row;
  }

  /** Adds a row holding one field (an element of a list of plain values). */
  appendCell(field: string, value: unknown): number {
    const row = this.newRow();
    this.shapeOf.set(row, this.shapeOfKeys([field]));
    this.columns.get(field)!.set(row, value);
    return row;
  }

  /** Makes `row` hold `doc`, field by field. */
  write(row: number, doc: Doc, fresh = false): void {
    const keys = Object.keys(doc);
    const before = fresh ? undefined : this.shapes[this.shapeOf.get(row)];
    const id = this.shapeOfKeys(keys);
    this.shapeOf.set(row, id);
    const shape = this.shapes[id]!;
    for (let i = 0; i < keys.length; i++) shape.columns[i]!.set(row, (doc as Record<string, unknown>)[keys[i]!]);
    if (before && before !== shape) for (const column of before.columns) if (column.inShape[id] !== 1) column.clear(row);
  }

  /** The document a row holds, as a fresh copy. */
  read(row: number): Doc {
    const shape = this.shapes[this.shapeOf.get(row)]!;
    const doc: Record<string, unknown> = {};
    for (let i = 0; i < shape.keys.length; i++) {
      const key = shape.keys[i]!;
      if (key === '__proto__') Object.defineProperty(doc, key, { value: shape.columns[i]!.get(row), enumerable: true, writable: true, configurable: true });
      else doc[key] = shape.columns[i]!.get(row);
    }
    return doc as Doc;
  }

  /** One field of a row, as callers see it (undefined when the row lacks it). */
  cell(row: number, field: string): unknown {
    const column = this.columns.get(field);
    return column?.present(row) ? column.get(row) : undefined;
  }
}
