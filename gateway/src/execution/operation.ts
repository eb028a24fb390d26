// What the edge plugins know of a request before Yoga parses it: who sends it, and the operation it will execute
// (rate limits bucket by its name; the cache policy comes from its fields).
import type { Viewer } from '@ordergraph/core';
import { getOperationAST, print, type DocumentNode, type OperationDefinitionNode } from 'graphql';
import { createLRUCache, type GraphQLParams } from 'graphql-yoga';
import type { ViewerContext } from '../security/auth.js';

/** The verified viewer the authentication plugin put on the server context (which becomes the GraphQL context). */
export const viewerOf = (context: unknown): Viewer => (context as Partial<ViewerContext> | undefined)?.viewer ?? null;

/** The claims read of each request's token: the rate limit, the cost budget and override labels may each ask. */
const claimsOfRequest = new WeakMap<Request, Record<string, unknown> | undefined>();

/**
 * The claims of the bearer token the viewer was verified from. Read without verifying again: a viewer is only set
 * (security/auth.ts) when that very header's token verified, and an anonymous caller's claims are not read.
 */
export function verifiedClaims(context: unknown): Record<string, unknown> | undefined {
  const { viewer, request } = (context ?? {}) as { viewer?: Viewer; request?: Request };
  if (!viewer || !request) return undefined;
  if (claimsOfRequest.has(request)) return claimsOfRequest.get(request);
  const payload = /^Bearer (.+)$/i.exec(request.headers.get('authorization') ?? '')?.[1]?.split('.')[1];
  let claims: Record<string, unknown> | undefined;
  try {
    claims = payload ? (JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>) : undefined;
  } catch {
    claims = undefined;
  }
  claimsOfRequest.set(request, claims);
  return claims;
}

export interface RequestOperation {
  document: DocumentNode;
  operation: OperationDefinitionNode;
}

/** Undefined when the document does not parse or names no single operation to run (execution will then fail). */
export type OperationReader = ((params: GraphQLParams) => RequestOperation | undefined) & {
  /** The parse itself, through the same cache: Yoga's parse function, so each new text is parsed and measured once. */
  parse(source: string): DocumentNode;
};

// Each distinct document text is parsed once, by the bounded parser Yoga uses too (limits/operation-limits.ts).
export function createOperationReader(parseSource: (source: string) => DocumentNode): OperationReader {
  const documents = createLRUCache<DocumentNode>({ max: 1000 });
  const parse = (source: string): DocumentNode => {
    let document = documents.get(source);
    if (!document) documents.set(source, (document = parseSource(source)));
    return document;
  };
  const read = ({ query, operationName }: GraphQLParams) => {
    if (!query) return undefined;
    let document: DocumentNode;
    try {
      document = parse(query);
    } catch {
      return undefined;
    }
    const operation = getOperationAST(document, operationName);
    return operation ? { document, operation } : undefined;
  };
  return Object.assign(read, { parse });
}

/**
 * A document's text, printed once per document object: Yoga's parse cache hands out one object per query text, and
 * the planners one per fetch of a plan (subscriptions/sharing.ts and entity-batching.ts key on it).
 */
const printed = new WeakMap<DocumentNode, string>();
export function printedOnce(document: DocumentNode): string {
  let text = printed.get(document);
  if (text === undefined) printed.set(document, (text = print(document)));
  return text;
}
