// DateTime, JSON and URL, identical in every subgraph (DESIGN section 3), built on graphql-scalars.
import { GraphQLScalarType, GraphQLError, Kind } from 'graphql';
import { DateTimeResolver, JSONResolver, URLResolver } from 'graphql-scalars';

/** RFC 3339 UTC with milliseconds, for example `2026-11-21T17:36:00.000Z`. */
export const DateTime = new GraphQLScalarType<Date, string>({
  ...DateTimeResolver.toConfig(),
  serialize(value) {
    const parsed = DateTimeResolver.serialize(value);
    const date = parsed instanceof Date ? parsed : new Date(String(parsed));
    return date.toISOString();
  },
});

export const JSON = JSONResolver;

function httpUrl(value: unknown): URL {
  const url = value instanceof URL ? value : new URL(String(value));
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new GraphQLError(`URL must use http or https: ${url.href}`, { extensions: { code: 'BAD_USER_INPUT' } });
  }
  return url;
}

/** An absolute http(s) URL. */
export const URL_ = new GraphQLScalarType<URL, string>({
  ...URLResolver.toConfig(),
  name: 'URL',
  serialize: (value) => httpUrl(URLResolver.serialize(value)).href,
  parseValue: (value) => httpUrl(URLResolver.parseValue(value)),
  parseLiteral(ast, variables) {
    if (ast.kind !== Kind.STRING) {
      throw new GraphQLError(`URL must be a string, got ${ast.kind}`, { extensions: { code: 'BAD_USER_INPUT' } });
    }
    return httpUrl(URLResolver.parseLiteral(ast, variables));
  },
});

/** Resolver map entries for the scalars, spread into each subgraph's resolvers. */
export const scalarResolvers = { DateTime, JSON, URL: URL_ };
