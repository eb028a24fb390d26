// Which index each store query reads, on any backend: a database wrapper records every query a store sends, and
// each is then explained by the backend itself (MongoDB's explain when MONGO_URL is set, the embedded planner always).
import type { Doc, DocumentCollection, DocumentDatabase, Filter, FindOptions, IndexSpec, QueryPlan } from '@ordergraph/store';

export interface RecordedQuery {
  collection: DocumentCollection<Doc>;
  operation: 'find' | 'findOne' | 'count' | 'findOneAndUpdate';
  filter: Filter;
  options: FindOptions;
}

/** `db` with every query of its collections recorded in `queries`, in the order sent. */
export function recordingDatabase(db: DocumentDatabase): { db: DocumentDatabase; queries: RecordedQuery[] } {
  const queries: RecordedQuery[] = [];
  const recording: DocumentDatabase = {
    backend: db.backend,
    ping: () => db.ping(),
    close: () => db.close(),
    async collection<T extends Doc>(name: string, indexes: IndexSpec[]): Promise<DocumentCollection<T>> {
      const inner = await db.collection<T>(name, indexes);
      const self = inner as unknown as DocumentCollection<Doc>;
      return {
        name,
        find: (filter, options) => (queries.push({ collection: self, operation: 'find', filter, options }), inner.find(filter, options)),
        findOne: (filter) => (queries.push({ collection: self, operation: 'findOne', filter, options: { sort: { _id: 1 }, limit: 1 } }), inner.findOne(filter)),
        count: (filter) => (queries.push({ collection: self, operation: 'count', filter, options: { sort: {} } }), inner.count(filter)),
        findOneAndUpdate: (filter, update) => (queries.push({ collection: self, operation: 'findOneAndUpdate', filter, options: { sort: { _id: 1 }, limit: 1 } }), inner.findOneAndUpdate(filter, update)),
        insertOne: (doc) => inner.insertOne(doc),
        insertMany: (docs) => inner.insertMany(docs),
        explain: (filter, options) => inner.explain(filter, options),
      };
    },
  };
  return { db: recording, queries };
}

/**
 * The recorded queries the backend answers without an index (a collection scan; the empty count, which both backends
 * answer from the collection's size, aside), each with its plan.
 */
export async function unindexedQueries(queries: RecordedQuery[]): Promise<{ query: string; plan: QueryPlan }[]> {
  const unindexed: { query: string; plan: QueryPlan }[] = [];
  for (const query of queries) {
    if (query.operation === 'count' && Object.keys(query.filter).length === 0) continue;
    const plan = await query.collection.explain(query.filter, query.options);
    if (plan.index === null) unindexed.push({ query: `${query.collection.name}.${query.operation} ${JSON.stringify(query.filter)} ${JSON.stringify(query.options)}`, plan });
  }
  return unindexed;
}
