// The products collection: stored documents and the queries on them, for either backend.
import { randomUUID } from 'node:crypto';
import { findByIdsInKeyOrder, type DocumentCollection, type DocumentDatabase, type IndexSpec } from '@ordergraph/store';
import { allWords, backfillWords, searchWords, wordMatchScore } from '@ordergraph/subgraph-kit';

export interface ProductDoc {
  [key: string]: unknown;
  _id: string;
  /** Trimmed. */
  name: string;
  /** The words of the name (searchWords), the indexed field search reads. */
  words: string[];
  /** The list price. */
  priceCents: number;
  /** When set, below priceCents and the price charged now. */
  salePriceCents: number | null;
  description: string | null;
  /** An absolute http(s) URL. */
  imageUrl: string | null;
  /**
   * The `attributes` JSON value as text: MongoDB refuses `$`-prefixed keys inside `$set`, and any JSON value must
   * round-trip unchanged on both backends. Nothing queries inside it.
   */
  attributesJson: string | null;
  createdAt: Date;
  updatedAt: Date;
  /** Incremented by every write; updates compare-and-set on it. */
  version: number;
}

/** A product's writable fields, validated (see domain/products.ts). `attributes` is any JSON value, null for none. */
export interface ProductFields {
  name: string;
  priceCents: number;
  salePriceCents: number | null;
  description: string | null;
  imageUrl: string | null;
  attributes: unknown;
}

/** Every query below reads one of these (docs/operating.md, Indexes, lists them with the API fields they serve). */
const PRODUCT_INDEXES: IndexSpec[] = [
  // products(limit, offset), oldest first: ordered, so an offset is a position.
  { name: 'createdAt_id', key: { createdAt: 1, _id: 1 } },
  // search(query): the products holding every word, in _id order.
  { name: 'words_id', key: { words: 1, _id: 1 }, multikey: true },
];

const OLDEST_FIRST = { createdAt: 1, _id: 1 } as const;

/** Products ranked per search, as in users: a query matching more ranks only the first ones in id order. */
const SEARCH_CANDIDATES = 500;

/** The stored `attributes` JSON value, or null when none is set. */
export const attributesOf = (doc: ProductDoc): unknown =>
  doc.attributesJson === null ? null : (JSON.parse(doc.attributesJson) as unknown);

/** The writable fields of a stored product, for computing its next state. */
export const fieldsOf = (doc: ProductDoc): ProductFields => ({
  name: doc.name,
  priceCents: doc.priceCents,
  salePriceCents: doc.salePriceCents,
  description: doc.description,
  imageUrl: doc.imageUrl,
  attributes: attributesOf(doc),
});

/** The stored form of a product's fields, with the derived fields they imply. */
function toDocumentFields(fields: ProductFields) {
  return {
    name: fields.name,
    words: searchWords(fields.name),
    priceCents: fields.priceCents,
    salePriceCents: fields.salePriceCents,
    description: fields.description,
    imageUrl: fields.imageUrl,
    attributesJson: fields.attributes === null || fields.attributes === undefined ? null : JSON.stringify(fields.attributes),
  } satisfies Omit<ProductDoc, '_id' | 'createdAt' | 'updatedAt' | 'version'>;
}

export class ProductStore {
  private constructor(private readonly products: DocumentCollection<ProductDoc>) {}

  static async open(db: DocumentDatabase): Promise<ProductStore> {
    return new ProductStore(await db.collection<ProductDoc>('products', PRODUCT_INDEXES));
  }

  /**
   * Gives the products stored before search read `words` (by an earlier version) their words; returns how many. The
   * server runs it in the background at start; it reads the words index, so it costs one empty lookup once done.
   */
  fillSearchWords(): Promise<number> {
    return backfillWords(this.products, (doc) => searchWords(doc.name));
  }

  /** One query for a batch of ids; results in key order, null for a missing id. */
  findByIds(ids: readonly string[]): Promise<(ProductDoc | null)[]> {
    return findByIdsInKeyOrder(this.products, ids);
  }

  async findById(id: string): Promise<ProductDoc | null> {
    const [doc] = await this.findByIds([id]);
    return doc ?? null;
  }

  /** Offset pagination, oldest first. */
  async list(page: { limit: number; offset: number }): Promise<ProductDoc[]> {
    // Both backends read limit 0 as "no limit".
    if (page.limit === 0) return [];
    return this.products.find({}, { sort: OLDEST_FIRST, skip: page.offset, limit: page.limit });
  }

  async create(fields: ProductFields, now = new Date()): Promise<ProductDoc> {
    const doc: ProductDoc = {
      _id: randomUUID(),
      ...toDocumentFields(fields),
      createdAt: now,
      updatedAt: now,
      version: 0,
    };
    await this.products.insertOne(doc);
    return doc;
  }

  /**
   * Compare-and-set: writes `fields` only if the product is still at `version` (the state they were computed from),
   * and returns it as updated; null when the product is missing or another write got there first.
   */
  async update(id: string, version: number, fields: ProductFields, now = new Date()): Promise<ProductDoc | null> {
    return this.products.findOneAndUpdate({ _id: id, version }, { $set: { ...toDocumentFields(fields), updatedAt: now }, $inc: { version: 1 } });
  }

  /**
   * Products whose name holds every word of `text` (whole words, case- and accent-insensitive), best first, then by
   * id; at most `limit`.
   */
  async search(text: string, limit: number): Promise<{ doc: ProductDoc; score: number }[]> {
    const filter = allWords('words', text);
    if (filter === null || limit === 0) return [];
    const matches = await this.products.find(filter, { sort: { _id: 1 }, limit: SEARCH_CANDIDATES });
    return matches
      .map((doc) => ({ doc, score: wordMatchScore(text, doc.name) }))
      .sort((a, b) => b.score - a.score || a.doc._id.localeCompare(b.doc._id))
      .slice(0, limit);
  }

  /** Loads documents as they are (seed data), a batch at a time; skipped when the collection already has products. */
  async seed(batches: Iterable<ProductDoc[]>): Promise<number> {
    if ((await this.products.count({})) > 0) return 0;
    let written = 0;
    for (const docs of batches) {
      await this.products.insertMany(docs);
      written += docs.length;
    }
    return written;
  }
}
