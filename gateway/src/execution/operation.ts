// What the edge plugins know of a request before Yoga parses it: who sends it, and the operation it will execute
// (rate limits bucket by its name; the cache policy comes from its fields).
import type { Viewer } from '@ordergraph/core';
import { getOperationAST, print, type DocumentNode, type OperationDefinitionNode } from 'graphql';
import { createLRUCache, type GraphQLParams } from 'graphql-yoga';
import type { ViewerContext } from '../security/auth.js';

/** The verified viewer the authentication plugin put on the server context (which becomes the GraphQL context). */
export const viewerOf = (context: unknown): Viewer => (context as Partial<ViewerContext> | undefined)?.viewer ?? null;

export interface RequestOperation {
  document: DocumentNode;
  operation: OperationDefinitionNode;
}

/** Undefined when the document does not parse or names no single operation to run (execution will then fail). */
export type OperationReader = (params: GraphQLParams) => RequestOperation | undefined;

// Each distinct document text is parsed once, by the same token-limited parser Yoga uses.
export function createOperationReader(parse: (source: string) => DocumentNode): OperationReader {
  const documents = createLRUCache<DocumentNode>({ max: 1000 });
  return ({ query, operationName }) => {
    if (!query) return undefined;
    let document = documents.get(query);
    if (!document) {
      try {
        document = parse(query);
      } catch {
        return undefined;
      }
      documents.set(query, document);
    }
    const operation = getOperationAST(document, operationName);
    return operation ? { document, operation } : undefined;
  };
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
