import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { subgraphHttpClient } from '../../src/subgraphs/http-client.js';

/** A real subgraph-like server: answers by path, and records what it was sent. */
let server: Server;
let base: string;
const received: { method: string; headers: IncomingMessage['headers']; body: string }[] = [];

beforeAll(async () => {
  server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      received.push({ method: request.method!, headers: request.headers, body });
      if (request.url === '/graphql') {
        response.writeHead(200, { 'content-type': 'application/graphql-response+json', 'x-answer': ['one', 'two'] });
        response.end(JSON.stringify({ data: { echo: body } }));
      } else if (request.url === '/refuse') {
        response.writeHead(503, { 'retry-after': '2' });
        response.end();
      } else if (request.url === '/stream') {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.write('event: next\ndata: {"data":{"n":1}}\n\n');
        setTimeout(() => response.end('event: complete\ndata:\n\n'), 20);
      } else if (request.url === '/slow') {
        setTimeout(() => response.end('{}'), 5_000).unref();
      } else {
        response.end(`${request.method} ${request.url}`);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('the subgraph HTTP client', () => {
  const client = subgraphHttpClient();
  afterAll(() => client.close());

  it('sends a GraphQL POST with its headers and answers status, reason, every header and the body', async () => {
    const response = await client.fetch(`${base}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer t' }, body: '{"query":"{a}"}' });
    expect(response.status).toBe(200);
    expect(response.statusText).toBe('OK');
    expect(response.headers.get('content-type')).toBe('application/graphql-response+json');
    expect(response.headers.get('x-answer')).toBe('one, two');
    expect(await response.json()).toEqual({ data: { echo: '{"query":"{a}"}' } });
    expect(received.at(-1)).toMatchObject({ method: 'POST', headers: { authorization: 'Bearer t', 'content-type': 'application/json' } });
  });

  it('answers a refusal as the status it is, with its headers, for the retries to read', async () => {
    const response = await client.fetch(`${base}/refuse`, { method: 'POST', body: '{}' });
    expect([response.status, response.statusText, response.headers.get('retry-after')]).toEqual([503, 'Service Unavailable', '2']);
    expect(await response.text()).toBe('');
  });

  it('hands a stream on as it arrives', async () => {
    const response = await client.fetch(`${base}/stream`, { method: 'POST', body: '{}' });
    const reader = response.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    expect(first).toContain('"n":1');
    let rest = '';
    for (let part = await reader.read(); !part.done; part = await reader.read()) rest += new TextDecoder().decode(part.value);
    expect(rest).toContain('event: complete');
  });

  it('stops a call when its signal aborts', async () => {
    const controller = new AbortController();
    const call = client.fetch(`${base}/slow`, { method: 'POST', body: '{}', signal: controller.signal });
    controller.abort(new Error('client left'));
    await expect(call).rejects.toThrow();
  });

  it('leaves any other request to the runtime fetch', async () => {
    const response = await client.fetch(`${base}/other?x=1`);
    expect(await response.text()).toBe('GET /other?x=1');
  });

  it('fails a call to a closed port as the transport failure it is', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    await expect(client.fetch(`http://127.0.0.1:${port}/graphql`, { method: 'POST', body: '{}' })).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });
});
