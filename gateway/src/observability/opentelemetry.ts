// OpenTelemetry at the gateway through Hive's own plugin, loaded only when tracing is on
// (packages/core/src/telemetry.ts starts the SDK).
import type { GatewayConfigContext, GatewayPlugin } from '@graphql-hive/gateway-runtime';
import type { EndingSpan, SpanAmender } from '@ordergraph/core/telemetry';
import { CLIENT_CLOSED_MESSAGE } from '../server/request-signals.js';

/** Builds the plugin for the runtime's configuration context, tracing requests to `graphqlEndpoint`. */
export type OpenTelemetryPlugin = (context: GatewayConfigContext, graphqlEndpoint: string) => GatewayPlugin;

// A span for each GraphQL request over HTTP, its operation, parse, validate, execute and every subgraph fetch,
// continued from the client's `traceparent` and sent on to the subgraphs in theirs.
export async function loadOpenTelemetryPlugin(): Promise<OpenTelemetryPlugin> {
  const { useOpenTelemetry } = await import('@graphql-hive/plugin-opentelemetry');
  return (context, graphqlEndpoint) =>
    useOpenTelemetry({
      ...context,
      traces: {
        spans: {
          // Probes, scrapes and GraphiQL's page are not worth a trace each.
          http: ({ request }) => new URL(request.url).pathname === graphqlEndpoint,
        },
      },
    });
}

/** OpenTelemetry's status codes (the API's SpanStatusCode, not loaded unless tracing is on). */
const UNSET = 0;
const ERROR = 2;

/**
 * A span that failed only because its client left (the gateway cancelled its subgraph calls: request-signals.ts) is
 * not an error: the runtime's plugin marks the cancelled fetches and the execution as errors, which would read as a
 * failing subgraph in every error rate taken from traces. Such a span ends unset and marked `ordergraph.client_closed`,
 * its exception event kept. The SDK refuses to set a status back to unset, so the field is written.
 */
export const clientClosedSpans: SpanAmender = {
  onStart() {},
  onEnding(span: EndingSpan) {
    if (span.status.code !== ERROR) return;
    if (!span.events.some((event) => event.name === 'exception' && event.attributes?.['exception.message'] === CLIENT_CLOSED_MESSAGE)) return;
    span.status = { code: UNSET };
    span.setAttribute('ordergraph.client_closed', true);
  },
  onEnd() {},
  forceFlush: () => Promise.resolve(),
  shutdown: () => Promise.resolve(),
};
