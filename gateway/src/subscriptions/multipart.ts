// Subscriptions over HTTP multipart (Apollo's protocol, subscriptionSpec=1.0), the transport Apollo Client's HttpLink
// uses by default; Yoga serves subscriptions as event streams only.
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';
import type { ExecutionResult, FormattedExecutionResult } from 'graphql';
import { REQUEST_ID_HEADER } from '@ordergraph/core';
import { resultJson } from './result-json.js';
import { isSubscriptionRequest } from '../shared/subscription-requests.js';

const BOUNDARY = 'graphql';
export const MULTIPART_SUBSCRIPTION_TYPE = `multipart/mixed;boundary="${BOUNDARY}";subscriptionSpec=1.0`;
const HEARTBEAT_MS = 5_000;

/** Whether a request accepts Apollo's multipart subscriptions (its Accept names multipart/mixed with subscriptionSpec). */
export function acceptsMultipartSubscription(request: Request): boolean {
  return (request.headers.get('accept') ?? '')
    .split(',')
    .some((range) => range.split(';')[0]!.trim().toLowerCase() === 'multipart/mixed' && /;\s*subscriptionSpec=/i.test(range));
}

type FetchAPI = { ReadableStream: typeof ReadableStream; Response: typeof Response };

function multipartResponse(events: AsyncIterable<ExecutionResult>, fetchAPI: FetchAPI, format: (result: ExecutionResult) => FormattedExecutionResult) {
  const encoder = new TextEncoder();
  // Each part is followed at once by the next boundary, which is what tells a client the part is complete.
  const part = (json: string) => encoder.encode(`\r\ncontent-type: application/json; charset=utf-8\r\n\r\n${json}\r\n--${BOUNDARY}`);
  const iterator = events[Symbol.asyncIterator]();
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  const end = () => clearInterval(heartbeat);
  const body = new fetchAPI.ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(encoder.encode(`\r\n--${BOUNDARY}`));
      controller.enqueue(part('{}'));
      heartbeat = setInterval(() => controller.enqueue(part('{}')), HEARTBEAT_MS);
    },
    async pull(controller) {
      const { done, value } = await iterator.next().catch((error: unknown) => {
        end();
        throw error;
      });
      if (done) {
        end();
        controller.enqueue(encoder.encode('--\r\n')); // the last boundary becomes the closing one
        controller.close();
        return;
      }
      const formatted = format(value);
      // An event the format leaves as it is has the JSON its other subscribers' transports wrote (result-json.ts).
      controller.enqueue(part(formatted === value ? `{"payload":${resultJson(value)}}` : JSON.stringify({ payload: formatted })));
    },
    async cancel() {
      end();
      await iterator.return?.();
    },
  });
  return new fetchAPI.Response(body, { status: 200, headers: { 'content-type': MULTIPART_SUBSCRIPTION_TYPE, 'cache-control': 'no-store' } });
}

// Each event is a part `{"payload": <result>}`, a `{}` part every few seconds keeps idle proxies from closing the
// connection, and the final boundary ends the stream. A client that goes away ends the stream, and its upstream
// subscription.
/** `format`: what a result looks like to a client (the error policy, without yoga's internal extensions). */
export function useMultipartSubscriptions(format: (result: ExecutionResult, requestId?: string) => FormattedExecutionResult): GatewayPlugin {
  return {
    onResultProcess({ request, result, resultProcessor, setResultProcessor }) {
      if (resultProcessor || !(typeof result === 'object' && Symbol.asyncIterator in result) || !acceptsMultipartSubscription(request)) return;
      // Only a subscription's stream: a query's incremental parts (@defer) are yoga's multipart (deferSpec=20220824),
      // even when its Accept also names subscriptionSpec.
      if (!isSubscriptionRequest(request)) return;
      setResultProcessor(
        (events, fetchAPI) => {
          // The stream outlives the request's async context: each part's errors name the request explicitly.
          const requestId = request.headers.get(REQUEST_ID_HEADER) ?? undefined;
          return multipartResponse(events as AsyncIterable<ExecutionResult>, fetchAPI as unknown as FetchAPI, (result) => format(result, requestId));
        },
        'multipart/mixed',
      );
    },
  };
}
