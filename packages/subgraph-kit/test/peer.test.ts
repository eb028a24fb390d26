// The peer helper against a real HTTP server this test starts: identity forwarding, the timeout, and error mapping.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger, REQUEST_ID_HEADER, withRequest } from '@ordergraph/core';
import { createPeer } from '../src/peer.js';
import { isSignedWith } from '../src/signature.js';

let server: Server;
let base: string;
const received: { headers: IncomingHttpHeaders; body: string }[] = [];

beforeAll(async () => {
  server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      received.push({ headers: request.headers, body });
      if (request.url === '/slow') return; // never answers: only the caller's timeout ends it
      if (request.url === '/html') {
        response.writeHead(502, { 'content-type': 'text/html' }).end('<h1>Bad gateway</h1>');
        return;
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: { echo: JSON.parse(body) } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const logger = createLogger('peer-test', 'silent');
const peerAt = (path: string, timeoutMs?: number) =>
  createPeer({ name: 'catalog', url: `${base}${path}`, logger, timeoutMs, signingSecret: undefined, unavailableMessage: 'The catalog is temporarily unavailable' });

async function failure(promise: Promise<unknown>) {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught as { message: string; extensions: Record<string, unknown> },
  );
  expect(error).not.toBeNull();
  return { message: error!.message, extensions: error!.extensions };
}

const UNAVAILABLE = {
  message: 'The catalog is temporarily unavailable',
  extensions: { code: 'SUBGRAPH_UNAVAILABLE', subgraph: 'catalog' },
};

describe('createPeer', () => {
  it('signs each operation with the signing secret, as the gateway signs, so a subgraph that requires it serves it', async () => {
    const secret = 'peer-test-signing-secret-of-32-characters';
    const signing = createPeer({ name: 'catalog', url: `${base}/graphql`, logger, signingSecret: secret, unavailableMessage: 'The catalog is temporarily unavailable' });
    const answer = await signing.request<{ echo: Record<string, unknown> }>('query ($x: Int) { a(x: $x) }', { x: 1 });
    expect(isSignedWith(secret, answer.data!.echo)).toBe(true);
    expect(isSignedWith('another-secret-of-at-least-32-characters', answer.data!.echo)).toBe(false);
    const unsigned = await peerAt('/graphql').request<{ echo: Record<string, unknown> }>('{ a }', {});
    expect(unsigned.data?.echo).not.toHaveProperty('extensions');
  });

  it("sends the operation and forwards the caller's request id and Authorization header", async () => {
    const answer = await withRequest('req-42', () => peerAt('/graphql').request<{ echo: unknown }>('{ a }', { x: 1 }, 'Bearer t0k'));
    expect(answer.data?.echo).toEqual({ query: '{ a }', variables: { x: 1 } });
    const { headers } = received.at(-1)!;
    expect(headers[REQUEST_ID_HEADER]).toBe('req-42');
    expect(headers.authorization).toBe('Bearer t0k');
    expect(headers['content-type']).toBe('application/json');
  });

  it('sends no Authorization header and no request id when there are none', async () => {
    await peerAt('/graphql').request('{ a }', {});
    const { headers } = received.at(-1)!;
    expect(headers.authorization).toBeUndefined();
    expect(headers[REQUEST_ID_HEADER]).toBeUndefined();
  });

  it('gives up on a peer that does not answer in time, as SUBGRAPH_UNAVAILABLE', async () => {
    expect(await failure(peerAt('/slow', 200).request('{ a }', {}))).toEqual(UNAVAILABLE);
  });

  it('maps an answer that is not JSON to SUBGRAPH_UNAVAILABLE without its content', async () => {
    const error = await failure(peerAt('/html').request('{ a }', {}));
    expect(error).toEqual(UNAVAILABLE);
    expect(JSON.stringify(error)).not.toContain('Bad gateway');
  });

  it('maps a refused connection to SUBGRAPH_UNAVAILABLE', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const peer = createPeer({ name: 'catalog', url: `http://127.0.0.1:${port}/graphql`, logger, signingSecret: undefined, unavailableMessage: UNAVAILABLE.message });
    expect(await failure(peer.request('{ a }', {}))).toEqual(UNAVAILABLE);
  });

  it('gives typed clients the same error for an answer they cannot use', () => {
    const error = peerAt('/graphql').unavailable({ reason: 'no entities' });
    expect({ message: error.message, extensions: error.extensions }).toEqual(UNAVAILABLE);
  });
});
