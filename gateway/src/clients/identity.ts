// Who the client of a request is, decided once per operation and kept on its context: the name and version its headers
// declare, else the client the trusted-documents manifest attributes its document to. Header values are the caller's
// own words: only short names of a plain character set count, anything else is as if no name was sent.
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';
import type { GraphQLParams } from 'graphql-yoga';

export interface ClientIdentity {
  readonly name: string;
  readonly version: string;
  /** Declared by the request's headers, attributed by the manifest to the document it runs, or unknown. */
  readonly source: 'header' | 'document' | 'none';
}

/** The name and version of a client that did not say (and whose document the manifest does not attribute). */
export const UNKNOWN = 'unknown';
export const UNIDENTIFIED: ClientIdentity = Object.freeze({ name: UNKNOWN, version: UNKNOWN, source: 'none' });

/** Name and version headers in pairs, read in this order: Apollo's convention, then Hive's (and its `x-` variant). */
export const CLIENT_HEADERS = [
  ['apollographql-client-name', 'apollographql-client-version'],
  ['graphql-client-name', 'graphql-client-version'],
  ['x-graphql-client-name', 'x-graphql-client-version'],
] as const;

export const CLIENT_NAME_MAX_LENGTH = 64;
export const CLIENT_VERSION_MAX_LENGTH = 32;
// Letters, digits and a few separators (`@acme/web`, `Apollo iOS`, `web-app:prod`); spaces only inside.
const NAME = new RegExp(`^[A-Za-z0-9@](?:[A-Za-z0-9 ._@/:+-]{0,${CLIENT_NAME_MAX_LENGTH - 2}}[A-Za-z0-9._@/:+-])?$`);
// Semantic versions with pre-release and build parts, dates, commit hashes.
const VERSION = new RegExp(`^[A-Za-z0-9][A-Za-z0-9._+-]{0,${CLIENT_VERSION_MAX_LENGTH - 1}}$`);

/** `value` when it is a client name as the gateway accepts one, else undefined. */
export const clientName = (value: string | null | undefined): string | undefined => (value && NAME.test(value) ? value : undefined);
/** `value` when it is a client version as the gateway accepts one, else undefined. */
export const clientVersion = (value: string | null | undefined): string | undefined => (value && VERSION.test(value) ? value : undefined);

/**
 * The client a request's headers declare: the first pair whose name is acceptable, with its version (`unknown` when
 * absent or not acceptable). Undefined when no header names a client acceptably.
 */
export function declaredClient(headers: Headers): ClientIdentity | undefined {
  for (const [nameHeader, versionHeader] of CLIENT_HEADERS) {
    const name = clientName(headers.get(nameHeader));
    if (name) return { name, version: clientVersion(headers.get(versionHeader)) ?? UNKNOWN, source: 'header' };
  }
  return undefined;
}

export interface ClientContext {
  client: ClientIdentity;
}

/** The client an operation was identified as (useClientIdentity), unknown before that. */
export const clientOf = (context: unknown): ClientIdentity => (context as Partial<ClientContext> | undefined)?.client ?? UNIDENTIFIED;

/**
 * Identifies each operation's client on its context (each operation of a batch has its own): by its headers, else by
 * `attribute`, the manifest's owner of the document it runs. Placed after persisted documents are resolved, so the
 * document is known, and before anything that reads the client.
 */
export function useClientIdentity(attribute: (params: GraphQLParams) => ClientIdentity | undefined): GatewayPlugin {
  return {
    onParams({ params, request, context }) {
      (context as Partial<ClientContext>).client = declaredClient(request.headers) ?? attribute(params) ?? UNIDENTIFIED;
    },
  };
}
