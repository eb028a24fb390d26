// The server's responses (GatewayResponse) hand Node a Buffer for a large string body: the bytes a client receives
// are the same, in any encoding and beside small writes, and the large string no longer reaches the socket as one.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { GatewayResponse } from '../../src/server/http.js';

let server: http.Server | undefined;
afterEach(() => new Promise<void>((done) => (server ? (server.closeAllConnections(), server.close(() => done())) : done())));

/** Serves `respond` with GatewayResponse; resolves with the URL and what each response handed its socket. */
async function serve(respond: (response: http.ServerResponse) => void) {
  const written: unknown[] = [];
  server = http.createServer({ ServerResponse: GatewayResponse }, (_, response) => {
    const socketWrite = response.socket!.write.bind(response.socket);
    response.socket!.write = ((chunk: unknown, ...rest: never[]) => (written.push(chunk), socketWrite(chunk as string, ...rest))) as typeof socketWrite;
    respond(response);
  });
  await new Promise<void>((done) => server!.listen(0, '127.0.0.1', done));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, written };
}

// Multi-byte characters on both sides of the 16 KiB line, as a GraphQL answer with names in any script carries.
const large = JSON.stringify({ data: { names: Array.from({ length: 3000 }, (_, i) => `Zoë ${i} 東京 🚀`) } });

describe('GatewayResponse', () => {
  it('answers a large JSON body written as one string byte for byte, its headers before it', async () => {
    const { url, written } = await serve((response) => {
      response.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
      response.write(large);
      response.end();
    });
    const response = await fetch(url);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await response.text()).toBe(large);
    expect(written.some((chunk) => typeof chunk === 'string' && chunk.length >= large.length)).toBe(false);
  });

  it('keeps the encoding a large string was written in, and small writes as they were', async () => {
    const latin1 = 'é'.repeat(20_000);
    const { url } = await serve((response) => {
      response.writeHead(200, { 'content-type': 'text/plain; charset=latin1' });
      response.write('start:');
      response.write(latin1, 'latin1', () => undefined);
      response.end(':end');
    });
    const bytes = new Uint8Array(await (await fetch(url)).arrayBuffer());
    expect(bytes.length).toBe('start:'.length + latin1.length + ':end'.length);
    expect(Buffer.from(bytes).toString('latin1')).toBe(`start:${latin1}:end`);
  });
});
