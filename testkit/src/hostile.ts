// Hostile traffic a gateway must refuse without keeping anything of it (issue 47, point 4): a body far past the limit,
// idle WebSockets that never say connection_init, a frame far past the limit, thousands of subscribes on one socket,
// and a flood of distinct persisted-query registrations from one client. Each returns what the gateway answered, so a
// caller can check every refusal was clean. bench/hostile-memory.ts and e2e/hostile-memory.test.ts share them.
import { createHash } from 'node:crypto';
import { request } from 'node:http';
import WebSocket from 'ws';
import { toWsUrl } from './subscriptions.js';

const CHUNK = Buffer.alloc(64 * 1024, 0x20);

/**
 * POSTs a JSON body of `bytes` (spaces after a valid operation), with a Content-Length (`declared`) or chunked, and
 * writes it as fast as the socket takes it. Resolves with the status the gateway answered, or `reset` when the
 * connection ended without an answer.
 */
export function hugeBody(url: string, bytes: number, declared: boolean): Promise<number | 'reset'> {
  return new Promise((resolve) => {
    const head = Buffer.from('{"query":"{ __typename }"');
    const tail = Buffer.from('}');
    const req = request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(declared ? { 'content-length': String(bytes) } : {}) },
      agent: false,
    });
    let answered: number | 'reset' = 'reset';
    req.on('response', (response) => {
      answered = response.statusCode ?? 'reset';
      response.resume();
      response.on('end', () => {
        req.destroy();
        resolve(answered);
      });
    });
    req.on('error', () => resolve(answered));
    req.on('close', () => resolve(answered));
    let left = bytes - head.length - tail.length;
    req.write(head);
    const pump = () => {
      while (left > 0) {
        const piece = left >= CHUNK.length ? CHUNK : CHUNK.subarray(0, left);
        left -= piece.length;
        if (!req.write(piece)) return void req.once('drain', pump);
      }
      req.end(tail);
    };
    pump();
  });
}

/** Opens `count` WebSockets (graphql-transport-ws) that never send connection_init; resolves with their close codes. */
export async function idleSockets(url: string, count: number): Promise<number[]> {
  return Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<number>((resolve) => {
          const socket = new WebSocket(toWsUrl(url), 'graphql-transport-ws');
          socket.on('close', (code) => resolve(code));
          socket.on('error', () => {});
        }),
    ),
  );
}

/** Opens a graphql-ws connection (acknowledged, as `token`'s bearer when given) and hands it over. */
function initialised(url: string, token?: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(toWsUrl(url), 'graphql-transport-ws');
    socket.on('error', reject);
    socket.once('open', () => socket.send(JSON.stringify({ type: 'connection_init', payload: token ? { Authorization: `Bearer ${token}` } : {} })));
    socket.once('message', (data) => {
      const message = JSON.parse(String(data)) as { type: string };
      if (message.type === 'connection_ack') resolve(socket);
      else reject(new Error(`expected connection_ack, got ${String(data)}`));
    });
  });
}

/** Sends one frame of `bytes` on an acknowledged connection; resolves with the close code. */
export async function bigFrame(url: string, bytes: number): Promise<number> {
  const socket = await initialised(url);
  const closed = new Promise<number>((resolve) => socket.on('close', (code) => resolve(code)));
  socket.on('error', () => {});
  socket.send(Buffer.alloc(bytes, 0x20));
  return closed;
}

export interface SubscribeFlood {
  /** Subscribes answered with an `error` message. */
  refused: number;
  /** Subscribes accepted (no error): the connection's bound. */
  accepted: number;
}

/**
 * Sends `count` subscribes (distinct ids, one operation) on one connection as `token`, then waits until the connection
 * has been quiet for `quietMs` (the subscribes not refused by then were accepted), and closes it.
 */
export async function subscribeFlood(url: string, count: number, query: string, token?: string, quietMs = 3_000): Promise<SubscribeFlood> {
  const socket = await initialised(url, token);
  let refused = 0;
  let last = Date.now();
  socket.on('message', (data) => {
    if ((JSON.parse(String(data)) as { type: string }).type === 'error') refused++;
    last = Date.now();
  });
  socket.on('error', () => {});
  for (let id = 0; id < count; id++) socket.send(JSON.stringify({ id: String(id), type: 'subscribe', payload: { query } }));
  while (Date.now() - last < quietMs && socket.readyState === WebSocket.OPEN) await new Promise((done) => setTimeout(done, 100));
  const closed = new Promise<void>((done) => socket.once('close', () => done()));
  socket.close(1000);
  await closed;
  return { refused, accepted: count - refused };
}

/**
 * Registers `count` distinct automatic persisted queries (query text and its sha256) from one client, `concurrency` at
 * a time, each `{ __typename }` with an alias of its own (`prefix` keeps two floods apart). Resolves with how many
 * got each status.
 */
export async function apqRegistrations(url: string, count: number, concurrency: number, prefix: string): Promise<Map<number, number>> {
  const statuses = new Map<number, number>();
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const query = `{ ${prefix}${next++}: __typename }`;
      const sha256Hash = createHash('sha256').update(query).digest('hex');
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query, extensions: { persistedQuery: { version: 1, sha256Hash } } }),
      });
      await response.arrayBuffer();
      statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return statuses;
}
