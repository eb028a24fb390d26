// Subscriptions through the gateway: how they reach the subgraph that serves them, the gauge of open streams, and
// what shutdown does to Server-Sent Events streams.
import type { Socket } from 'node:net';
import type { IncomingMessage } from 'node:http';
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';
import { activeSubscriptionsGauge, trackSubscription } from '@ordergraph/common';
import type { Registry } from 'prom-client';

/**
 * Transport additions for every HTTP subgraph: subscription operations go over graphql-ws to the subgraph's own
 * /graphql (its HTTP location as ws://), with the caller's Authorization in connection_init for the subgraph to
 * verify. Callers with the same credential share one upstream connection; it closes once their last subscription
 * ends.
 */
export const SUBSCRIPTION_TRANSPORT = {
  '*.http': {
    options: {
      subscriptions: {
        kind: 'ws',
        options: { connectionParams: { Authorization: '{context.headers.authorization}' } },
      },
    },
  },
};

interface HttpContext {
  request?: Request;
  /** Node's request, for operations that came over HTTP (and the upgrade request of a WebSocket). */
  req?: IncomingMessage;
}

export interface SubscriptionTracking {
  /** graphql_active_subscriptions: every stream the gateway serves, over WebSocket or SSE. */
  plugin: GatewayPlugin;
  /**
   * Cuts the connection of every open SSE stream, the event-stream counterpart of a WebSocket's 1001: graphql-sse
   * clients retry a stream that ends without `complete`, and so reconnect to another replica.
   */
  cutEventStreams(): void;
}

export function subscriptionTracking(registry: Registry): SubscriptionTracking {
  const gauge = activeSubscriptionsGauge(registry);
  const eventStreams = new Set<Socket>();
  return {
    plugin: {
      onSubscribe: ({ context }) => ({
        onSubscribeResult({ result, setResult }) {
          if (!(Symbol.asyncIterator in result)) return;
          const { request, req } = context as HttpContext;
          const socket = request?.headers.get('accept')?.includes('text/event-stream') ? req?.socket : undefined;
          if (socket) eventStreams.add(socket);
          setResult(trackSubscription(result, gauge, () => socket && eventStreams.delete(socket)));
        },
      }),
    },
    cutEventStreams() {
      for (const socket of eventStreams) socket.destroy();
    },
  };
}
