// Logs as an operator reads them: every line of every process (the Hive runtime's own included) one JSON object, no
// ANSI colour, no credential even at debug level, and every line about a request carrying its ID, which the client
// gets back in the x-request-id header and in every error.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { WebSocket } from 'ws';
import { token, waitFor, wsClient } from '@ordergraph/testkit';
import { startSupergraph, type Supergraph } from '@ordergraph/testkit/e2e';

let supergraph: Supergraph;
const raw: string[] = [];
let bearer: string;

beforeAll(async () => {
  supergraph = await startSupergraph({ env: { LOG_LEVEL: 'debug' }, logs: { write: (line: string) => void raw.push(line) } });
  bearer = await token('ADMIN', 'user-0000');
});
afterAll(() => supergraph?.stop());

const lines = () => raw.join('').split('\n').filter(Boolean);
const parsed = () => lines().map((line) => JSON.parse(line) as { service: string; msg: string; requestId?: string; component?: string });

async function post(body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(supergraph.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${bearer}`, ...headers },
    body: JSON.stringify(body),
  });
  return { requestId: response.headers.get('x-request-id'), body: (await response.json()) as { errors?: { extensions: Record<string, unknown> }[] } };
}

describe('request IDs', () => {
  it('keeps a well-formed x-request-id, returns it, and every process logs the request under it', async () => {
    const id = 'client-7d0c6c1e-request';
    const { requestId, body } = await post({ query: '{ search(query: "lamp") { __typename } }' }, { 'x-request-id': id });
    expect(body.errors).toBeUndefined();
    expect(requestId).toBe(id);
    const about = parsed().filter((line) => line.requestId === id);
    // The gateway's runtime, the users subgraph it called, and the catalog and orders subgraphs users asked in turn.
    expect(new Set(about.filter((line) => line.component === 'hive').map((line) => line.service))).toEqual(new Set(['gateway']));
    expect(new Set(about.filter((line) => line.msg === 'graphql request').map((line) => line.service))).toEqual(new Set(['users', 'orders', 'catalog']));
  });

  it('replaces a malformed x-request-id with a new one', async () => {
    for (const malformed of ['has spaces in it', 'x'.repeat(200), 'short']) {
      const { requestId } = await post({ query: '{ __typename }' }, { 'x-request-id': malformed });
      expect(requestId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    }
  });

  it('puts the ID in every error, from the gateway and from a subgraph', async () => {
    const invalid = await post({ query: '{ noSuchField }' });
    expect(invalid.body.errors?.[0]?.extensions['requestId']).toBe(invalid.requestId);
    const notFound = await post({ query: '{ order(id: "T3JkZXI6bm9uZQ") { id } }' });
    expect(notFound.requestId).toBeTruthy();
    expect(notFound.body.errors?.length).toBeGreaterThan(0);
    for (const error of notFound.body.errors!) expect(error.extensions['requestId']).toBe(notFound.requestId);
  });
});

type Result = { errors?: { extensions: Record<string, unknown> }[] };

describe('request IDs over WebSocket', () => {
  const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

  it('gives the connection one, returned in the handshake: the client\'s when well-formed, else a new one', async () => {
    const handshake = async (headers: Record<string, string>) => {
      const socket = new WebSocket(supergraph.url.replace(/^http/, 'ws'), 'graphql-transport-ws', { headers });
      const upgraded = await new Promise<{ headers: Record<string, unknown> }>((resolve, reject) => socket.once('upgrade', resolve).once('error', reject));
      socket.close();
      return upgraded.headers['x-request-id'];
    };
    expect(await handshake({ 'x-request-id': 'client-socket-0001' })).toBe('client-socket-0001');
    expect(await handshake({ 'x-request-id': 'has spaces in it' })).toMatch(UUID);
  });

  it('runs every operation of the connection under it: in its errors and in every process\'s log lines', async () => {
    const id = 'client-socket-0002';
    const client = wsClient(supergraph.url, { token: bearer, headers: { 'x-request-id': id } });
    // The first result as the client gets it (the test kit's streams drop request IDs); a refusal rejects with its errors.
    const first = async (query: string): Promise<Result> => {
      const results = client.iterate({ query });
      try {
        return (await results.next()).value as Result;
      } catch (errors) {
        return { errors: errors as Result['errors'] };
      } finally {
        await results.return?.();
      }
    };
    try {
      const invalid = await first('{ noSuchField }');
      expect(invalid.errors?.[0]?.extensions['requestId']).toBe(id);
      const notFound = await first('{ order(id: "T3JkZXI6bm9uZQ") { id } }');
      expect(notFound.errors?.length).toBeGreaterThan(0);
      for (const error of notFound.errors!) expect(error.extensions['requestId']).toBe(id);
      expect((await first('{ search(query: "lamp") { __typename } }')).errors).toBeUndefined();
    } finally {
      await client.dispose();
    }
    const about = parsed().filter((line) => line.requestId === id);
    expect(new Set(about.filter((line) => line.msg === 'graphql request').map((line) => line.service))).toEqual(new Set(['users', 'orders', 'catalog']));
  });

  it('logs a frame over the limit as a JSON line under the connection\'s ID, over either protocol, not on the console', async () => {
    // graphql-ws's own report of a socket error is a console.error.
    const consoleErrors = vi.spyOn(console, 'error');
    try {
      for (const protocol of ['graphql-transport-ws', 'graphql-ws']) {
        const id = `client-socket-big-${protocol}`;
        const socket = new WebSocket(supergraph.url.replace(/^http/, 'ws'), protocol, { headers: { 'x-request-id': id } });
        await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
        const closed = new Promise<number>((resolve) => socket.once('close', resolve));
        socket.send(JSON.stringify({ type: 'connection_init', payload: { pad: 'x'.repeat(2 * 1024 * 1024) } }));
        expect(await closed).toBe(1009);
        await waitFor(() => parsed().some((line) => line.requestId === id && line.msg === 'websocket connection error'), `the error of ${protocol} logged`);
        const logged = parsed().find((line) => line.requestId === id && line.msg === 'websocket connection error') as unknown as { service: string; err: { code: string } };
        expect(logged).toMatchObject({ service: 'gateway', err: { code: 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH' } });
      }
      expect(consoleErrors).not.toHaveBeenCalled();
    } finally {
      consoleErrors.mockRestore();
    }
  });
});

describe('every line', () => {
  it('is one JSON object, without ANSI colour or a credential, from every process', async () => {
    await post({ query: '{ me { id } }' });
    const all = lines();
    expect(all.length).toBeGreaterThan(20);
    // The runtime's debug lines quote the headers it forwards: the token was there, and was replaced.
    expect(all.some((line) => line.includes('[redacted]'))).toBe(true);
    for (const line of all) {
      expect(() => JSON.parse(line), line).not.toThrow();
      expect(line).not.toContain('\u001b[');
      expect(line).not.toContain(bearer);
      expect(line).not.toContain(bearer.split('.')[1]!);
    }
    expect(new Set(parsed().map((line) => line.service))).toEqual(new Set(['gateway', 'users', 'orders', 'catalog']));
  });
});
