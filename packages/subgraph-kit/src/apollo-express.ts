// Apollo Server behind express, as @as-integrations/express5 serves it but for one call: that package reads the query
// string with url.parse, which on Node 24 captures a stack trace on every call (to decide whether to warn about
// itself), a few percent of a subgraph's CPU. Apollo's documented integration API (executeHTTPGraphQLRequest) does the rest.
import { HeaderMap, type ApolloServer, type BaseContext } from '@apollo/server';
import type express from 'express';

/** The query string of a request target, as url.parse gives it: from the `?` up to any `#`, or '' without one. */
export function searchOf(target: string): string {
  const hash = target.indexOf('#');
  const beforeHash = hash === -1 ? target : target.slice(0, hash);
  const start = beforeHash.indexOf('?');
  return start === -1 ? '' : beforeHash.slice(start);
}

/** Serves `server` on an express route whose body a JSON parser has read. */
export function apolloHandler<TContext extends BaseContext>(
  server: ApolloServer<TContext>,
  context: (args: { req: express.Request; res: express.Response }) => Promise<TContext>,
): express.RequestHandler {
  server.assertStarted('apolloHandler()');
  return async (req, res) => {
    if (!('body' in req)) {
      res.status(500);
      res.send('`req.body` is not set; this probably means you forgot to set up the `json` middleware before the Apollo Server middleware.');
      return;
    }
    const headers = new HeaderMap();
    for (const [key, value] of Object.entries(req.headers)) {
      if (value !== undefined) headers.set(key, Array.isArray(value) ? value.join(', ') : value);
    }
    const response = await server.executeHTTPGraphQLRequest({
      httpGraphQLRequest: { method: req.method.toUpperCase(), headers, search: searchOf(req.url), body: req.body },
      context: () => context({ req, res }),
    });
    for (const [key, value] of response.headers) res.setHeader(key, value);
    res.statusCode = response.status ?? 200;
    if (response.body.kind === 'complete') {
      res.send(response.body.string);
      return;
    }
    for await (const chunk of response.body.asyncIterator) {
      res.write(chunk);
      // compression's res.flush, when that middleware is in use.
      (res as { flush?: () => void }).flush?.();
    }
    res.end();
  };
}
