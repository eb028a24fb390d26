// Where a deployed gateway gets its supergraph: a file re-read on every poll (SUPERGRAPH_POLL_INTERVAL), so a newly
// composed supergraph goes live without a restart.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Logger } from '@ordergraph/core';

const fingerprint = (sdl: string) => createHash('sha256').update(sdl).digest('hex').slice(0, 12);

// Hive Gateway compares each read with the one it serves and rebuilds only on a change; requests admitted on the
// previous supergraph finish on it (gracefulSchemaReload).
/**
 * A supergraph source for createGateway that reads `path` each time it is called. Reads the file once now, so a
 * missing or unreadable file fails at start rather than on the first request. Writers must replace the file
 * atomically (writeSupergraph in supergraph.ts, `npm run compose`, or a rename), never rewrite it in place.
 */
export function supergraphFile(path: string, logger: Logger): () => string {
  let served = readFileSync(path, 'utf8');
  logger.info({ path, supergraph: fingerprint(served) }, 'supergraph loaded');
  return () => {
    const sdl = readFileSync(path, 'utf8');
    if (sdl !== served) {
      served = sdl;
      logger.info({ path, supergraph: fingerprint(sdl) }, 'new supergraph read; switching to it');
    }
    return sdl;
  };
}
