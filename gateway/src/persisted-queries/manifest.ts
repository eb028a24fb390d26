// The trusted-documents manifest (Apollo's persisted-query manifest format) the gateway serves by id, re-read while it
// runs so that a client release can add its operations without a gateway restart.
import { readFileSync, statSync } from 'node:fs';
import { ConfigError, type Logger } from '@ordergraph/core';
import { parse } from 'graphql';
import { z } from 'zod';

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
}

/** Reads and checks a manifest: the format, unique ids, and bodies that parse. Throws an Error naming the problem. */
export function parseManifest(text: string): ManifestOperations {
  const parsed = manifestSchema.safeParse(JSON.parse(text));
  if (!parsed.success) throw new Error(`not an Apollo persisted-query manifest: ${z.prettifyError(parsed.error).replaceAll('\n', ' ')}`);
  const manifest = parsed.data;
  const byId = new Map<string, string>();
  for (const { id, body, name } of manifest.operations) {
    const known = byId.get(id);
    if (known !== undefined && known !== body) throw new Error(`id "${id}" names two different bodies`);
    try {
      parse(body, { noLocation: true });
    } catch (error) {
      throw new Error(`the body of ${name ?? id} does not parse: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
    byId.set(id, body);
  }
  return { byId, bodies: new Set(byId.values()), entries: manifest.operations };
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

const NO_OPERATIONS: ManifestOperations = { byId: new Map(), bodies: new Set(), entries: [] };

/** No manifest: nothing is known by id. */
export const EMPTY_MANIFEST: PersistedManifest = {
  current: () => NO_OPERATIONS,
  close: () => undefined,
};
