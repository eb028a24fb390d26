// Which HTTP requests subscribe, known once for the plugins that format their streams (errors.ts, multipart.ts).
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';

/** HTTP requests whose operation is a subscription: their result is a stream of events, not incremental parts. */
const subscriptionRequests = new WeakSet<Request>();

/** Records each request that subscribes, whatever the plugins order. */
export const useSubscriptionRequests = (): GatewayPlugin => ({
  onSubscribe({ args }) {
    const { request } = args.contextValue as { request?: Request };
    if (request) subscriptionRequests.add(request);
  },
});

export const isSubscriptionRequest = (request: Request): boolean => subscriptionRequests.has(request);
