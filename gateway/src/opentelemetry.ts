// OpenTelemetry at the gateway through Hive's own plugin, loaded only when tracing is on
// (packages/core/src/telemetry.ts starts the SDK).
import type { GatewayConfigContext, GatewayPlugin } from '@graphql-hive/gateway-runtime';

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
