// A sequence of row numbers kept in blocks of at most BLOCK, so an insert or a removal anywhere moves at most one
// block's entries (a few microseconds) where one array of a million would move them all (milliseconds), while a
// position is still found in a step: a binary search over the blocks' starts.

const BLOCK = 2048;

export class RowList {
  private blocks: Int32Array[] = [];
  private lengths: number[] = [];
  /** Position of each block's first entry; correct below `valid`. */
  private starts: number[] = [];
  private valid = 0;
  private last = 0;
  size = 0;

  /** A list holding `rows` in order, blocks filled to three quarters so the first inserts do not split them. */
  static of(rows: ArrayLike<number>): RowList {
    const list = new RowList();
    const fill = (BLOCK * 3) / 4;
    for (let start = 0; start < rows.length; start += fill) {
      const length = Math.min(fill, rows.length - start);
      const block = new Int32Array(BLOCK);
      for (let i = 0; i < length; i++) block[i] = rows[start + i]!;
      list.blocks.push(block);
      list.lengths.push(length);
    }
    list.size = rows.length;
    return list;
  }

  private refresh(): void {
    if (this.valid >= this.blocks.length) return;
    let start = this.valid === 0 ? 0 : this.starts[this.valid - 1]! + this.lengths[this.valid - 1]!;
    for (let b = this.valid; b < this.blocks.length; b++) {
      this.starts[b] = start;
      start += this.lengths[b]!;
    }
    this.starts.length = this.blocks.length;
    this.valid = this.blocks.length;
  }

  /** The block holding position `i` (0 <= i < size). */
  private locate(i: number): number {
    this.refresh();
    const last = this.last;
    if (last < this.blocks.length && i >= this.starts[last]! && i < this.starts[last]! + this.lengths[last]!) return last;
    let low = 0;
    let high = this.blocks.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >>> 1;
      if (this.starts[middle]! <= i) low = middle;
      else high = middle - 1;
    }
    this.last = low;
    return low;
  }

  /**
   * Where the first entry for which `before` is false is (the entries for which it is true come first): its block and
   * offset, by a binary search over the blocks' last entries then one within the block. Needs no positions, so a
   * run of inserts never recounts them.
   */
  find(before: (row: number) => boolean): [number, number] {
    if (this.size === 0) return [this.blocks.length, 0];
    let low = 0;
    let high = this.blocks.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (before(this.blocks[middle]![this.lengths[middle]! - 1]!)) low = middle + 1;
      else high = middle;
    }
    if (low === this.blocks.length) return [low, 0];
    const block = this.blocks[low]!;
    let first = 0;
    let last = this.lengths[low]! - 1;
    while (first < last) {
      const middle = (first + last) >>> 1;
      if (before(block[middle]!)) first = middle + 1;
      else last = middle;
    }
    return [low, first];
  }

  /** The entry at a block and offset `find` gave, or undefined past the end. */
  entry(b: number, offset: number): number | undefined {
    if (b >= this.blocks.length) return undefined;
    if (offset >= this.lengths[b]!) return b + 1 < this.blocks.length ? this.blocks[b + 1]![0] : undefined;
    return this.blocks[b]![offset];
  }

  /** The position of a block and offset `find` gave. */
  positionOf(b: number, offset: number): number {
    if (b >= this.blocks.length) return this.size;
    this.refresh();
    return this.starts[b]! + offset;
  }

  /** Inserts `row` at a block and offset `find` gave. */
  insertAt(b: number, offset: number, row: number): void {
    if (b >= this.blocks.length) return this.push(row);
    this.valid = Math.min(this.valid, b + 1);
    if (this.lengths[b] === BLOCK) {
      // Split the full block in two halves.
      const block = this.blocks[b]!;
      const half = BLOCK >>> 1;
      const upper = new Int32Array(BLOCK);
      upper.set(block.subarray(half));
      this.blocks.splice(b + 1, 0, upper);
      this.lengths.splice(b + 1, 0, BLOCK - half);
      this.lengths[b] = half;
      if (offset > half) {
        b++;
        offset -= half;
      }
    }
    let block = this.blocks[b]!;
    const length = this.lengths[b]!;
    if (length === block.length) block = this.grow(b);
    block.copyWithin(offset + 1, offset, length);
    block[offset] = row;
    this.lengths[b] = length + 1;
    this.size++;
  }

  at(i: number): number {
    const b = this.locate(i);
    return this.blocks[b]![i - this.starts[b]!]!;
  }

  set(i: number, row: number): void {
    const b = this.locate(i);
    this.blocks[b]![i - this.starts[b]!] = row;
  }

  push(row: number): void {
    const b = this.blocks.length - 1;
    if (b < 0 || this.lengths[b] === BLOCK) {
      this.blocks.push(new Int32Array(b < 0 ? 16 : BLOCK));
      this.lengths.push(0);
      return this.push(row);
    }
    let block = this.blocks[b]!;
    if (this.lengths[b] === block.length) {
      block = this.grow(b);
    }
    block[this.lengths[b]!++] = row;
    this.size++;
  }

  /** A small first block doubles as it fills, so a collection of a few documents holds a few bytes. */
  private grow(b: number): Int32Array {
    const block = new Int32Array(Math.min(BLOCK, this.blocks[b]!.length * 2));
    block.set(this.blocks[b]!);
    this.blocks[b] = block;
    return block;
  }

  insert(i: number, row: number): void {
    if (i === this.size) return this.push(row);
    const b = this.locate(i);
    this.insertAt(b, i - this.starts[b]!, row);
  }

  removeAt(i: number): void {
    const b = this.locate(i);
    const block = this.blocks[b]!;
    const length = this.lengths[b]!;
    const offset = i - this.starts[b]!;
    block.copyWithin(offset, offset + 1, length);
    this.lengths[b] = length - 1;
    this.size--;
    if (length === 1 && this.blocks.length > 1) {
      this.blocks.splice(b, 1);
      this.lengths.splice(b, 1);
      this.valid = Math.min(this.valid, b);
      this.last = 0;
    } else this.valid = Math.min(this.valid, b + 1);
  }

  *[Symbol.iterator](): Generator<number> {
    for (let b = 0; b < this.blocks.length; b++) {
      const block = this.blocks[b]!;
      const length = this.lengths[b]!;
      for (let i = 0; i < length; i++) yield block[i]!;
    }
  }

  /** Every row in order, into one array (for merges and scans). */
  toArray(): Int32Array {
    const rows = new Int32Array(this.size);
    let at = 0;
    for (let b = 0; b < this.blocks.length; b++) {
      rows.set(this.blocks[b]!.subarray(0, this.lengths[b]!), at);
      at += this.lengths[b]!;
    }
    return rows;
  }
}
