// DateTime, JSON and URL, identical in every subgraph, built on graphql-scalars.
import { GraphQLScalarType, GraphQLError, Kind } from 'graphql';
import { DateTimeResolver, JSONResolver, URLResolver } from 'graphql-scalars';

/** RFC 3339 UTC with milliseconds, for example `2026-11-21T17:36:00.000Z`. */
const dateTimeScalar = new GraphQLScalarType<Date, string>({
  ...DateTimeResolver.toConfig(),
  serialize(value) {
    // A valid Date, what every stored timestamp is, as graphql-scalars would pass it on: formatted at once.
    if (value instanceof Date && !Number.isNaN(value.getTime())) return value.toISOString();
    const parsed = DateTimeResolver.serialize(value);
    const date = parsed instanceof Date ? parsed : new Date(String(parsed));
    return date.toISOString();
  },
});

const jsonScalar = JSONResolver;

/**
 * Parses an absolute http(s) URL. Every failure is a BAD_USER_INPUT GraphQLError: the error masker passes only errors
 * raised on purpose, and the TypeError of `new URL` would reach clients as INTERNAL_SERVER_ERROR.
 */
function httpUrl(value: unknown): URL {
  let url: URL;
  try {
    url = value instanceof URL ? value : new URL(String(value));
  } catch {
    throw new GraphQLError(`URL must be an absolute http(s) URL: ${String(value)}`, { extensions: { code: 'BAD_USER_INPUT' } });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new GraphQLError(`URL must use http or https: ${url.href}`, { extensions: { code: 'BAD_USER_INPUT' } });
  }
  return url;
}

/** An absolute http(s) URL. */
const urlScalar = new GraphQLScalarType<URL, string>({
  ...URLResolver.toConfig(),
  name: 'URL',
  serialize: (value) => httpUrl(URLResolver.serialize(value)).href,
  parseValue: (value) => httpUrl(value),
  parseLiteral(ast) {
    if (ast.kind !== Kind.STRING) {
      throw new GraphQLError(`URL must be a string, got ${ast.kind}`, { extensions: { code: 'BAD_USER_INPUT' } });
    }
    return httpUrl(ast.value);
  },
});

/** Resolver map entries for the scalars, spread into each subgraph's resolvers. */
export const scalarResolvers = { DateTime: dateTimeScalar, JSON: jsonScalar, URL: urlScalar };
