// The legacy `graphql-ws` subprotocol (subscriptions-transport-ws) translated message by message onto the graphql-ws
// server, so both protocols share one server, one authentication, one set of limits and one heartbeat.
import { EventEmitter } from 'node:events';
import { GRAPHQL_TRANSPORT_WS_PROTOCOL, MessageType } from 'graphql-ws';
import type { WebSocket } from 'ws';

/** subscriptions-transport-ws message types that differ from graphql-transport-ws. */
const LEGACY_TO_CURRENT: Record<string, string> = { start: MessageType.Subscribe, stop: MessageType.Complete };
const CURRENT_TO_LEGACY: Record<string, string> = { [MessageType.Next]: 'data' };
/** graphql-transport-ws messages the legacy protocol has no counterpart for. */
const NOT_IN_LEGACY = new Set<string>([MessageType.Ping, MessageType.Pong]);

type Message = { type?: unknown } & Record<string, unknown>;

function translateMessageType(text: string, types: Record<string, string>): Message | string {
  let message: Message;
  try {
    message = JSON.parse(text) as Message;
  } catch {
    return text; // graphql-ws refuses it (4400) as it would any malformed message
  }
  const type = typeof message.type === 'string' ? types[message.type] : undefined;
  return type ? { ...message, type } : message;
}

// Written by hand because subscriptions-transport-ws, the library that served this protocol, is deprecated and
// unmaintained, and running it next to graphql-ws would duplicate everything the connection does.
//
// One difference is more than a rename: a legacy client sends `start` right after `connection_init`, without waiting
// for `connection_ack` (its server queued them), while graphql-ws closes a connection that subscribes before it is
// acknowledged (4401). So what arrives between the two waits here for the acknowledgement.
/**
 * A `ws` socket speaking the legacy protocol, presented with the interface graphql-ws's `useServer` drives: it
 * reports the graphql-transport-ws subprotocol, and sends and receives the translated messages.
 */
export class LegacyProtocolSocket extends EventEmitter {
  readonly protocol = GRAPHQL_TRANSPORT_WS_PROTOCOL;
  readonly OPEN: number;

  /** Messages received after connection_init, held until connection_ack is sent; undefined when none are held. */
  private awaitingAck: string[] | undefined;

  constructor(private readonly socket: WebSocket) {
    super();
    this.OPEN = socket.OPEN;
    socket.on('message', (data) => {
      const message = translateMessageType(String(data), LEGACY_TO_CURRENT);
      if (typeof message === 'object' && message.type === 'connection_terminate') {
        socket.close(1000, 'Normal Closure');
        return;
      }
      const text = typeof message === 'string' ? message : JSON.stringify(message);
      if (this.awaitingAck) {
        this.awaitingAck.push(text);
        return;
      }
      if (typeof message === 'object' && message.type === MessageType.ConnectionInit) this.awaitingAck = [];
      this.emit('message', text);
    });
    for (const event of ['pong', 'close', 'error'] as const) socket.on(event, (...args: unknown[]) => this.emit(event, ...args));
  }

  get readyState(): number {
    return this.socket.readyState;
  }

  send(data: string, callback?: (error?: Error) => void): void {
    const message = translateMessageType(data, CURRENT_TO_LEGACY);
    if (typeof message === 'object' && typeof message.type === 'string' && NOT_IN_LEGACY.has(message.type)) {
      callback?.();
      return;
    }
    this.socket.send(typeof message === 'string' ? message : JSON.stringify(message), callback);
    if (typeof message === 'object' && message.type === MessageType.ConnectionAck && this.awaitingAck) {
      const held = this.awaitingAck;
      this.awaitingAck = undefined;
      for (const text of held) this.emit('message', text);
    }
  }

  close(code?: number, reason?: string): void {
    this.socket.close(code, reason);
  }

  terminate(): void {
    this.socket.terminate();
  }

  ping(): void {
    this.socket.ping();
  }
}
