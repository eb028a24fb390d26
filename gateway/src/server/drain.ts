// The gateway's HTTP drain on shutdown. Hand-written: Hive's runtime has none of its own (its process handler disposes
// everything at once), and Apollo's drain plugin, which the subgraphs use, is not exported for other servers.
import type http from 'node:http';
import net, { type Socket } from 'node:net';

export interface HttpDrain {
  /** Every response from now on closes its connection; /readyz answers 503 (see `draining`). */
  begin(): void;
  readonly draining: boolean;
  /**
   * Stops accepting, ends idle keep-alive connections, lets every in-flight request finish and resolves once the
   * last connection is closed (true), or at the deadline, when what remains is cut (false).
   */
  close(deadlineMs: number): Promise<boolean>;
}

/**
 * How long a connection accepted but still without a request may stay open once the listener is closed: a client
 * starved of CPU may have connected and not yet written its request; a browser's preconnect never will.
 */
const FIRST_REQUEST_GRACE_MS = 2_000;

/** Bounds the turns spent accepting what the kernel holds while clients keep connecting. */
const MAX_ACCEPT_TURNS = 1_000;

const afterPoll = () => new Promise((resolve) => setImmediate(resolve));

/** Call before the server's request handler is attached, so the drain sees each request first. */
export function httpDrain(server: http.Server): HttpDrain {
  const sockets = new Map<Socket, { inFlight: number; served: number }>();
  let draining = false;
  let closing = false;
  let accepted = 0;
  server.on('connection', (socket: Socket) => {
    accepted++;
    sockets.set(socket, { inFlight: 0, served: 0 });
    socket.once('close', () => sockets.delete(socket));
  });
  // One listener for every response (no closure per request): the response knows its request, and that its socket.
  function responseClosed(this: http.ServerResponse) {
    const state = sockets.get(this.req.socket);
    if (!state) return;
    state.inFlight--;
    state.served++;
    if (closing && state.inFlight === 0) this.req.socket.end();
  }
  server.on('request', (request: http.IncomingMessage, response: http.ServerResponse) => {
    if (draining) response.setHeader('connection', 'close');
    const state = sockets.get(request.socket);
    if (!state) return;
    state.inFlight++;
    response.once('close', responseClosed);
  });
  const endIdle = (fresh: boolean) => {
    for (const [socket, state] of sockets) if (state.inFlight === 0 && (state.served > 0) !== fresh) socket.end();
  };
  return {
    begin() {
      draining = true;
    },
    get draining() {
      return draining;
    },
    async close(deadlineMs) {
      draining = true;
      // Connections the kernel already holds are accepted, and their requests read, before the listener closes: closing
      // it would reset them, and a busy loop accepts about one per turn.
      for (let turns = 0; turns < MAX_ACCEPT_TURNS; turns++) {
        const before = accepted;
        await afterPoll();
        if (accepted === before) break;
      }
      closing = true;
      // net.Server's close: http.Server's would also cut connections whose first request has not been read yet.
      const closed = new Promise<boolean>((resolve) => net.Server.prototype.close.call(server, () => resolve(true)));
      endIdle(false);
      const fresh = setTimeout(() => void afterPoll().then(() => endIdle(true)), FIRST_REQUEST_GRACE_MS);
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), deadlineMs)));
      const graceful = await Promise.race([closed, deadline]);
      clearTimeout(timer);
      clearTimeout(fresh);
      if (!graceful) {
        for (const socket of sockets.keys()) socket.destroy();
        await closed;
      }
      return graceful;
    },
  };
}
