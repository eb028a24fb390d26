// The HTTP client of subgraph calls: undici's own request API instead of the WHATWG fetch the runtime ships
// (@whatwg-node/node-fetch over node:http), which spent 2.5 to 3 times undici's client CPU on each subgraph GraphQL
// POST (bench/README.md, "Subgraph calls over undici"). Every other fetch of the runtime (a Request object, not a
// POST, or a body that is not a string) still goes through the runtime's fetch; a streamed answer is handed on as one.
import { STATUS_CODES } from 'node:http';
import { Readable } from 'node:stream';
import { fetch as runtimeFetch, Response } from '@whatwg-node/fetch';
import { Agent, request } from 'undici';

/** Answers read as they arrive, not buffered: subscriptions over SSE, @defer's parts. */
const STREAMED = /text\/event-stream|multipart\/mixed/;

export interface SubgraphHttpClient {
  /** The runtime's `fetchAPI.fetch`: subgraph calls over undici, everything else as before. */
  fetch: typeof fetch;
  /** Closes the kept-alive connections (the gateway's stop). */
  close(): Promise<void>;
}

/** Headers as undici reads them: a record, or the pairs of a Headers. */
type UndiciHeaders = Record<string, string> | Iterable<[string, string]>;

export function subgraphHttpClient(): SubgraphHttpClient {
  // One pool per origin, connections kept alive as long as the subgraph's server allows (its `Keep-Alive: timeout`).
  const agent = new Agent();
  const send = async (url: string, init: RequestInit & { body: string }): Promise<Response> => {
    const answer = await request(url, {
      method: 'POST',
      headers: init.headers as UndiciHeaders | undefined,
      body: init.body,
      signal: init.signal ?? undefined,
      dispatcher: agent,
    });
    const headers: [string, string][] = [];
    for (const [name, value] of Object.entries(answer.headers)) {
      if (Array.isArray(value)) for (const each of value) headers.push([name, each]);
      else if (value !== undefined) headers.push([name, value]);
    }
    const responseInit = { status: answer.statusCode, statusText: STATUS_CODES[answer.statusCode] ?? '', headers };
    const contentType = answer.headers['content-type'];
    if (typeof contentType === 'string' && STREAMED.test(contentType)) {
      return new Response(Readable.toWeb(answer.body) as ReadableStream, responseInit);
    }
    return new Response(await answer.body.text(), responseInit);
  };
  return {
    fetch: ((input: string | URL | Request, init?: RequestInit) => {
      const simple = (typeof input === 'string' || input instanceof URL) && init?.method === 'POST' && typeof init.body === 'string';
      return simple ? send(String(input), init as RequestInit & { body: string }) : runtimeFetch(input, init);
    }) as typeof fetch,
    close: () => agent.close(),
  };
}
