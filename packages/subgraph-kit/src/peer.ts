// One way for a subgraph to ask another: one signed POST with a timeout, the caller's request id and identity
// forwarded, and every transport failure answered as SUBGRAPH_UNAVAILABLE instead of leaking its cause.
import { GraphQLError } from 'graphql';
import { ErrorCode, forwardedRequestHeaders, type Logger } from '@ordergraph/core';
import { SIGNATURE_EXTENSION, signOperation } from './signature.js';

/** How long a peer may take before the asking request gives up on it. */
const PEER_TIMEOUT_MS = 5_000;

export interface PeerOptions {
  /** The peer subgraph's name, reported in logs and in the error's `subgraph` extension. */
  name: string;
  /** The peer's /graphql URL. */
  url: string;
  logger: Logger;
  /** The message of the SUBGRAPH_UNAVAILABLE error its failures become. */
  unavailableMessage: string;
  timeoutMs?: number | undefined;
  /** SUBGRAPH_SIGNING_SECRET: every operation is signed with it, as the peer requires when it is set. */
  signingSecret: string | undefined;
}

/** What every peer of one subgraph shares: its signing secret, and a timeout other than the default. */
export type PeerSettings = Pick<PeerOptions, 'signingSecret' | 'timeoutMs'>;

/** A GraphQL response as the peer sent it; errors inside a 200 are the typed client's to judge. */
interface PeerResponse<Data> {
  data?: Data | null;
  errors?: { message?: string; path?: (string | number)[]; extensions?: { code?: unknown } }[];
}

export interface Peer {
  /** Sends one operation; throws SUBGRAPH_UNAVAILABLE when the peer cannot be reached, times out or answers no JSON. */
  request<Data>(query: string, variables: Record<string, unknown>, authorization?: string): Promise<PeerResponse<Data>>;
  /** The error a typed client throws when the peer answered but not usably; `detail` is logged, never sent. */
  unavailable(detail: Record<string, unknown>): GraphQLError;
}

export function createPeer({ name, url, logger, unavailableMessage, timeoutMs = PEER_TIMEOUT_MS, signingSecret }: PeerOptions): Peer {
  const unavailable = (detail: Record<string, unknown>) => {
    logger.error({ ...detail, subgraph: name, url }, `${name} request failed`);
    return new GraphQLError(unavailableMessage, { extensions: { code: ErrorCode.SUBGRAPH_UNAVAILABLE, subgraph: name } });
  };
  return {
    async request<Data>(query: string, variables: Record<string, unknown>, authorization?: string) {
      let response: Response;
      try {
        response = await fetch(url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json',
            ...forwardedRequestHeaders(),
            ...(authorization ? { authorization } : {}),
          },
          body: JSON.stringify({
            query,
            variables,
            ...(signingSecret ? { extensions: { [SIGNATURE_EXTENSION]: signOperation(signingSecret, { query, variables }) } } : {}),
          }),
          signal: AbortSignal.timeout(timeoutMs),
        });
        return (await response.json()) as PeerResponse<Data>;
      } catch (error) {
        throw unavailable({ err: error });
      }
    },
    unavailable,
  };
}
