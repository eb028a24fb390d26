// The whole request's deadline, on a real HTTP server: an answer not begun by then is a JSON 504 and the request's
// signal aborts (which cancels its subgraph calls); an answer in time, or a stream already under way, is left alone.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { requestDeadline } from '../../src/server/http.js';
import { requestSignalOf } from '../../src/shared/request-signals.js';

const DEADLINE_MS = 100;
let server: http.Server | undefined;
afterEach(() => new Promise<void>((done) => (server ? (server.closeAllConnections(), server.close(() => done())) : done())));

/** A server whose requests get the deadline, then `handle`; resolves with its URL and each request's signal. */
async function serve(handle: (request: http.IncomingMessage, response: http.ServerResponse) => void) {
  const signals: AbortSignal[] = [];
  server = http.createServer((request, response) => {
    requestDeadline(request, response, DEADLINE_MS);
    signals.push(requestSignalOf(request)!);
    handle(request, response);
  });
  await new Promise<void>((done) => server!.listen(0, '127.0.0.1', done));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`, signals };
}

const wait = (ms: number) => new Promise((done) => setTimeout(done, ms));

describe('the request deadline', () => {
  it('answers 504 GATEWAY_TIMEOUT in JSON when nothing was answered in time, closes the connection and aborts the signal', async () => {
    const { url, signals } = await serve(() => undefined);
    const response = await fetch(url, { method: 'POST', body: '{}' });
    expect(response.status).toBe(504);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(response.headers.get('connection')).toBe('close');
    expect(await response.json()).toEqual({ errors: [{ message: 'The request did not complete within its deadline', extensions: { code: 'GATEWAY_TIMEOUT' } }] });
    expect(signals[0]!.aborted).toBe(true);
  });

  it('leaves an answer in time alone: nothing aborts once it was written', async () => {
    const { url, signals } = await serve((_, response) => response.writeHead(200, { 'content-type': 'application/json' }).end('{"data":{}}'));
    const response = await fetch(url, { method: 'POST', body: '{}' });
    expect([response.status, await response.text()]).toEqual([200, '{"data":{}}']);
    await wait(DEADLINE_MS * 2);
    expect(signals[0]!.aborted).toBe(false);
  });

  it('leaves a stream under way open past the deadline', async () => {
    const { url, signals } = await serve((_, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write(':\n\n');
      setTimeout(() => response.end('event: complete\ndata:\n\n'), DEADLINE_MS * 3);
    });
    const response = await fetch(url);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe(':\n\nevent: complete\ndata:\n\n');
    expect(signals[0]!.aborted).toBe(false);
  });

  it('aborts the signal when the client leaves before the answer', async () => {
    const { url, signals } = await serve(() => undefined);
    const client = new AbortController();
    const request = fetch(url, { method: 'POST', body: '{}', signal: client.signal }).catch(() => undefined);
    while (signals.length === 0) await wait(5);
    client.abort();
    await request;
    for (let i = 0; i < 50 && !signals[0]!.aborted; i++) await wait(5);
    expect(signals[0]!.aborted).toBe(true);
  });
});
