// The production backend: the official MongoDB driver, indexes created at start, bounded waits.
import { MongoClient, MongoServerError, type Collection, type Db, type ReadPreferenceMode } from 'mongodb';
import { DuplicateKeyError, type Doc, type DocumentCollection, type DocumentDatabase, type Filter, type FindOptions, type IndexSpec, type QueryPlan, type Update } from './types.js';

/** Server-side time limit of one query; a slow query fails instead of holding a request open. */
const MAX_TIME_MS = 5_000;

function translate(collection: string, error: unknown): unknown {
  if (error instanceof MongoServerError && error.code === 11000) {
    const index = /index: (\S+)/.exec(error.message)?.[1] ?? 'unknown';
    return new DuplicateKeyError(collection, index);
  }
  return error;
}

export interface MongoSettings {
  maxPoolSize?: number;
  readPreference?: ReadPreferenceMode;
}

class MongoCollection<T extends Doc> implements DocumentCollection<T> {
  constructor(private readonly collection: Collection<T>) {}

  get name(): string {
    return this.collection.collectionName;
  }

  async find(filter: Filter, options: FindOptions): Promise<T[]> {
    const cursor = this.collection.find(filter as never, { sort: options.sort, maxTimeMS: MAX_TIME_MS });
    if (options.skip) cursor.skip(options.skip);
    if (options.limit) cursor.limit(options.limit);
    return (await cursor.toArray()) as T[];
  }

  /**
   * The server's own account of the query (explain, `executionStats` verbosity): the index of the winning plan's
   * IXSCAN (null for a COLLSCAN), keys and documents examined, and whether a SORT stage sorted in memory.
   */
  async explain(filter: Filter, options: FindOptions): Promise<QueryPlan> {
    const cursor = this.collection.find(filter as never, { sort: options.sort, maxTimeMS: MAX_TIME_MS });
    if (options.skip) cursor.skip(options.skip);
    if (options.limit) cursor.limit(options.limit);
    const explained = await cursor.explain('executionStats');
    const stages: { stage?: string; indexName?: string }[] = [];
    // Plans nest stages under inputStage/inputStages; the slot-based engine wraps them in queryPlan.
    const walk = (node: unknown): void => {
      if (typeof node !== 'object' || node === null) return;
      const stage = node as Record<string, unknown>;
      if (typeof stage['stage'] === 'string') stages.push(stage as { stage: string; indexName?: string });
      for (const key of ['queryPlan', 'inputStage', 'inputStages']) {
        const child = stage[key];
        if (Array.isArray(child)) child.forEach(walk);
        else walk(child);
      }
    };
    const planner = explained['queryPlanner'] as { winningPlan?: unknown } | undefined;
    walk(planner?.winningPlan);
    const stats = (explained['executionStats'] ?? {}) as { totalKeysExamined?: number; totalDocsExamined?: number };
    const scan = stages.find((stage) => stage.stage === 'COLLSCAN');
    const index = stages.find((stage) => stage.stage === 'IXSCAN' || stage.stage === 'TEXT_MATCH' || stage.stage === 'IDHACK' || stage.stage === 'EXPRESS_IXSCAN');
    return {
      index: scan ? null : (index?.indexName ?? (index ? '_id_' : null)),
      keysExamined: stats.totalKeysExamined ?? 0,
      docsExamined: stats.totalDocsExamined ?? 0,
      sortedInMemory: stages.some((stage) => stage.stage === 'SORT'),
    };
  }

  async findOne(filter: Filter): Promise<T | null> {
    return (await this.collection.findOne(filter as never, { sort: { _id: 1 }, maxTimeMS: MAX_TIME_MS })) as T | null;
  }

  async count(filter: Filter): Promise<number> {
    return this.collection.countDocuments(filter as never, { maxTimeMS: MAX_TIME_MS });
  }

  async insertOne(doc: T): Promise<void> {
    try {
      await this.collection.insertOne(doc as never);
    } catch (error) {
      throw translate(this.name, error);
    }
  }

  async insertMany(docs: T[]): Promise<void> {
    if (docs.length === 0) return;
    try {
      await this.collection.insertMany(docs as never[], { ordered: true });
    } catch (error) {
      throw translate(this.name, error);
    }
  }

  async findOneAndUpdate(filter: Filter, update: Update): Promise<T | null> {
    try {
      return (await this.collection.findOneAndUpdate(filter as never, update as never, {
        returnDocument: 'after',
        sort: { _id: 1 },
        maxTimeMS: MAX_TIME_MS,
      })) as T | null;
    } catch (error) {
      throw translate(this.name, error);
    }
  }
}

export class MongoDatabase implements DocumentDatabase {
  readonly backend = 'mongodb' as const;

  private constructor(
    private readonly client: MongoClient,
    private readonly db: Db,
  ) {}

  static async connect(url: string, database: string, settings: MongoSettings = {}): Promise<MongoDatabase> {
    const client = new MongoClient(url, {
      maxPoolSize: settings.maxPoolSize ?? 50,
      waitQueueTimeoutMS: 2_000,
      serverSelectionTimeoutMS: 5_000,
      // Replica-set durability: a write is acknowledged once a majority has it (journaled), so a failover never
      // rolls it back, and a write cut by a primary election is retried once on the new primary.
      writeConcern: { w: 'majority', journal: true },
      retryWrites: true,
      retryReads: true,
      readPreference: settings.readPreference ?? 'primary',
      // Dates round-trip as Date, strings stay strings; _id is always our own string id.
      ignoreUndefined: true,
    });
    await client.connect();
    return new MongoDatabase(client, client.db(database));
  }

  /** Creates the collection's declared indexes (the same the embedded store keeps), if absent, before any query. */
  async collection<T extends Doc>(name: string, indexes: IndexSpec[]): Promise<DocumentCollection<T>> {
    const collection = this.db.collection<T>(name);
    if (indexes.length > 0) {
      await collection.createIndexes(
        indexes.map((index) => ({ key: index.key, name: index.name, unique: index.unique ?? false })),
      );
    }
    return new MongoCollection(collection);
  }

  async ping(): Promise<void> {
    await this.db.command({ ping: 1 }, { timeoutMS: 2_000 });
  }

  async close(): Promise<void> {
    await this.client.close();
  }

  /** Deletes the whole database; for test runs that each use a database of their own. */
  async dropDatabase(): Promise<void> {
    await this.db.dropDatabase();
  }
}
