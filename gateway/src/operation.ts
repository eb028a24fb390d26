// The operation a request will execute, read before Yoga parses it: rate limits bucket by its name, and the cache
// policy comes from its fields even when the response cache answers without executing. Each distinct document text
// is parsed once, by the same token-limited parser Yoga uses.
import { getOperationAST, type DocumentNode, type OperationDefinitionNode } from 'graphql';
import { createLRUCache, type GraphQLParams } from 'graphql-yoga';

export interface RequestOperation {
  document: DocumentNode;
  operation: OperationDefinitionNode;
}

/** Undefined when the document does not parse or names no single operation to run (execution will then fail). */
export type OperationReader = (params: GraphQLParams) => RequestOperation | undefined;

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
