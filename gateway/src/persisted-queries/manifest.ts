// The trusted-documents manifest (Apollo's persisted-query manifest format) the gateway serves by id, re-read while it
// runs so that a client release can add its operations without a gateway restart.
import { readFileSync, statSync } from 'node:fs';
import { ConfigError, type Logger } from '@ordergraph/core';
import { parse } from 'graphql';
import type { GraphQLParams } from 'graphql-yoga';
import { z } from 'zod';
import { CLIENT_NAME_MAX_LENGTH, UNKNOWN, clientName, clientVersion, type ClientIdentity } from '../clients/identity.js';

/** Apollo's persisted-query manifest, as `generate-persisted-query-manifest` (and `npm run manifest`) writes it. */
const manifestSchema = z.object({
  format: z.literal('apollo-persisted-query-manifest'),
  version: z.literal(1),
  operations: z.array(
    z.object({
      id: z.string().min(1).max(512),
      body: z.string().min(1),
      name: z.string().optional(),
      type: z.enum(['query', 'mutation', 'subscription']).optional(),
      // Not Apollo's: what an agent reads of the operation when the MCP door offers it as a tool (docs/mcp.md).
      description: z.string().max(2000).optional(),
      // Apollo's per-client safelists: the operation is served only to requests from this client.
      clientName: z
        .string()
        .refine((name) => clientName(name) !== undefined, `must be a client name the gateway accepts (up to ${CLIENT_NAME_MAX_LENGTH} letters, digits, spaces and . _ @ / : + -)`)
        .optional(),
    }),
  ),
});

/** One entry of the manifest, as written. */
export interface ManifestEntry {
  id: string;
  body: string;
  name?: string | undefined;
  type?: 'query' | 'mutation' | 'subscription' | undefined;
  description?: string | undefined;
}

export interface ManifestOperations {
  /** Bodies by id: any id (Apollo's SHA-256 of the body, a name, an app~version~hash as Hive writes them). */
  byId: ReadonlyMap<string, string>;
  /** Every body, to tell a document the manifest holds from an unknown one when it arrives as text. */
  bodies: ReadonlySet<string>;
  /** The entries in the manifest's order (the MCP door offers them as tools). */
  entries: readonly ManifestEntry[];
  /** The clients an id is served to, when every entry of that id names one (`clientName`); absent: any client. */
  clientsById: ReadonlyMap<string, ReadonlySet<string>>;
  /** The client a body belongs to, when every entry holding it names the same one (see documentOwner). */
  ownerByBody: ReadonlyMap<string, Owner>;
}

interface Owner {
  name: string;
  version?: string | undefined;
}

/** Hive's ids of an app deployment's documents: `<app>~<version>~<hash>`. */
const HIVE_DOCUMENT_ID = /^([^~]+)~([^~]+)~[^~]+$/;

/** Who an entry belongs to: its `clientName`, else the app and version of a Hive id; undefined: nobody in particular. */
function ownerOf(id: string, entryClient: string | undefined): Owner | undefined {
  if (entryClient) return { name: entryClient };
  const [, app, version] = HIVE_DOCUMENT_ID.exec(id) ?? [];
  const name = clientName(app);
  return name ? { name, version: clientVersion(version) } : undefined;
}

/** Reads and checks a manifest: the format, unique ids, and bodies that parse. Throws an Error naming the problem. */
export function parseManifest(text: string): ManifestOperations {
  const parsed = manifestSchema.safeParse(JSON.parse(text));
  if (!parsed.success) throw new Error(`not an Apollo persisted-query manifest: ${z.prettifyError(parsed.error).replaceAll('\n', ' ')}`);
  const manifest = parsed.data;
  const byId = new Map<string, string>();
  // null: an entry of that id (or body) is for every client.
  const clients = new Map<string, Set<string> | null>();
  const owners = new Map<string, Owner | null>();
  for (const { id, body, name, clientName: entryClient } of manifest.operations) {
    const known = byId.get(id);
    if (known !== undefined && known !== body) throw new Error(`id "${id}" names two different bodies`);
    try {
      parse(body, { noLocation: true });
    } catch (error) {
      throw new Error(`the body of ${name ?? id} does not parse: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
    byId.set(id, body);
    const served = clients.get(id);
    if (!entryClient) clients.set(id, null);
    else if (served === undefined) clients.set(id, new Set([entryClient]));
    else served?.add(entryClient);
    const owner = ownerOf(id, entryClient) ?? null;
    const before = owners.get(body);
    if (before === undefined) owners.set(body, owner);
    else if (before !== null && (owner === null || owner.name !== before.name)) owners.set(body, null);
    else if (before !== null && owner !== null && owner.version !== before.version) owners.set(body, { name: before.name });
  }
  return {
    byId,
    bodies: new Set(byId.values()),
    entries: manifest.operations,
    clientsById: new Map([...clients].filter((entry): entry is [string, Set<string>] => entry[1] !== null)),
    ownerByBody: new Map([...owners].filter((entry): entry is [string, Owner] => entry[1] !== null)),
  };
}

/**
 * The body of manifest id `id` when it is served to `client` (the name the request declares, undefined when it
 * declares none): an operation with a `clientName` only to that client, one without to every client. Null otherwise,
 * as for an id the manifest does not hold.
 */
export function servedBody(operations: ManifestOperations, id: string, client: string | undefined): string | null {
  const body = operations.byId.get(id);
  if (body === undefined) return null;
  const clients = operations.clientsById.get(id);
  return clients && (client === undefined || !clients.has(client)) ? null : body;
}

/**
 * The client the manifest attributes the document of `params` to: the one named by every entry holding that body
 * (their `clientName`, or the app of Hive's `<app>~<version>~<hash>` ids, whose version it takes too when they agree).
 * Undefined when the manifest does not hold the body, or holds it for nobody in particular or for several clients.
 */
export function documentOwner(manifest: PersistedManifest): (params: GraphQLParams) => ClientIdentity | undefined {
  return ({ query }) => {
    const owner = query ? manifest.current().ownerByBody.get(query) : undefined;
    return owner && { name: owner.name, version: owner.version ?? UNKNOWN, source: 'document' };
  };
}

/** The manifest file's operations now; `close()` stops watching it. */
export interface PersistedManifest {
  current(): ManifestOperations;
  close(): void;
}

const signature = (path: string) => {
  const stat = statSync(path);
  return `${stat.ino}:${stat.size}:${stat.mtimeMs}`;
};

/**
 * Reads the manifest at start (a bad file fails the start, naming the setting), then checks every `pollMs` whether the
 * file changed (inode, size, mtime: an atomic rename and a Kubernetes ConfigMap update both show) and swaps in the new
 * operations. A file that is missing or bad keeps the previous operations and logs an error once per change.
 */
export function watchManifest(path: string, pollMs: number, logger: Logger): PersistedManifest {
  let operations: ManifestOperations;
  let seen: string;
  try {
    seen = signature(path);
    operations = parseManifest(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new ConfigError(`Invalid configuration:\n  PERSISTED_QUERIES_MANIFEST: cannot read ${path}: ${error instanceof Error ? error.message : String(error)}`);
  }
  logger.info({ manifest: path, operations: operations.byId.size }, 'persisted documents manifest loaded');

  const reload = () => {
    let now: string;
    try {
      now = signature(path);
    } catch (error) {
      now = 'missing';
      if (seen !== now) logger.error({ err: error, manifest: path }, 'persisted documents manifest is missing; keeping the previous one');
      seen = now;
      return;
    }
    if (now === seen) return;
    seen = now;
    try {
      operations = parseManifest(readFileSync(path, 'utf8'));
      logger.info({ manifest: path, operations: operations.byId.size }, 'persisted documents manifest reloaded');
    } catch (error) {
      logger.error(
        { manifest: path, reason: error instanceof Error ? error.message : String(error) },
        'persisted documents manifest is invalid; keeping the previous one',
      );
    }
  };
  const timer = pollMs > 0 ? setInterval(reload, pollMs) : undefined;
  timer?.unref();
  return {
    current: () => operations,
    close: () => clearInterval(timer),
  };
}

const NO_OPERATIONS: ManifestOperations = { byId: new Map(), bodies: new Set(), entries: [], clientsById: new Map(), ownerByBody: new Map() };

/** No manifest: nothing is known by id. */
export const EMPTY_MANIFEST: PersistedManifest = {
  current: () => NO_OPERATIONS,
  close: () => undefined,
};
