// Apollo Server's formatError for every subgraph: what a client may see of an error, and nothing else.
import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { unwrapResolverError } from '@apollo/server/errors';
import { ErrorCode, INTERNAL_ERROR_MESSAGE, isPublicCode, rootCause } from '@ordergraph/core';

/**
 * Apollo Server `formatError`: keeps errors we raised on purpose and request errors (parse, validation, variable
 * coercion), and masks everything else, so no stack, driver message or internal detail ever leaves the process.
 * A field error counts as raised on purpose only when a GraphQLError is at its root. `onInternal` sees the original.
 */
export function createErrorMasker(onInternal: (error: unknown) => void) {
  return function formatError(formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError {
    const code = formatted.extensions?.['code'];
    const original = rootCause(unwrapResolverError(error));
    const fieldError = formatted.path !== undefined;
    const onPurpose = !fieldError || original instanceof GraphQLError;
    if (isPublicCode(code) && code !== ErrorCode.INTERNAL_SERVER_ERROR && onPurpose) {
      const { stacktrace: _stacktrace, ...extensions } = formatted.extensions ?? {};
      return { ...formatted, extensions };
    }
    onInternal(original);
    return {
      message: INTERNAL_ERROR_MESSAGE,
      ...(formatted.locations ? { locations: formatted.locations } : {}),
      ...(formatted.path ? { path: formatted.path } : {}),
      extensions: { code: ErrorCode.INTERNAL_SERVER_ERROR },
    };
  };
}
