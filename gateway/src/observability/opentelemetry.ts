// OpenTelemetry at the gateway through Hive's own plugin, loaded only when tracing is on
// (packages/core/src/telemetry.ts starts the SDK).
import type { GatewayConfigContext, GatewayPlugin } from '@graphql-hive/gateway-runtime';
import type { EndingSpan, SpanAmender } from '@ordergraph/core/telemetry';
import { clientOf, declaredClient, UNIDENTIFIED, type ClientIdentity } from '../clients/identity.js';
import { CLIENT_CLOSED_MESSAGE } from '../shared/request-signals.js';

/** Builds the plugins for the runtime's configuration context, tracing requests to `graphqlEndpoint`. */
export type OpenTelemetryPlugin = (context: GatewayConfigContext, graphqlEndpoint: string) => GatewayPlugin[];

/**
 * The client's attributes, named as Hive Gateway names them on its HTTP span (`hive.client.name`, read there from
 * `graphql-client-name` alone and unbounded): here the client clients/identity.ts decided, Apollo's headers and the
 * manifest included.
 */
export const CLIENT_NAME_ATTRIBUTE = 'hive.client.name';
export const CLIENT_VERSION_ATTRIBUTE = 'hive.client.version';

const clientAttributes = ({ name, version }: ClientIdentity) => ({ [CLIENT_NAME_ATTRIBUTE]: name, [CLIENT_VERSION_ATTRIBUTE]: version });

// A span for each GraphQL request over HTTP, its operation, parse, validate, execute and every subgraph fetch,
// continued from the client's `traceparent` and sent on to the subgraphs in theirs.
export async function loadOpenTelemetryPlugin(): Promise<OpenTelemetryPlugin> {
  const [{ useOpenTelemetry }, { hive, trace }] = await Promise.all([import('@graphql-hive/plugin-opentelemetry'), import('@graphql-hive/plugin-opentelemetry/api')]);
  // The client on the operation's span when it executes, and on the request's span as it answers (a request refused
  // before it executes too), overwriting Hive's own reading of the header.
  const clientSpans: GatewayPlugin = {
    onExecute({ args }) {
      const operation = hive.getOperationContext(args.contextValue);
      if (operation) trace.getSpan(operation)?.setAttributes(clientAttributes(clientOf(args.contextValue)));
    },
    onResponse({ request, serverContext }) {
      const http = hive.getHttpContext(request);
      const client = clientOf(serverContext);
      if (http) trace.getSpan(http)?.setAttributes(clientAttributes(client === UNIDENTIFIED ? (declaredClient(request.headers) ?? client) : client));
    },
  };
  return (context, graphqlEndpoint) => [
    useOpenTelemetry({
      ...context,
      traces: {
        spans: {
          // Probes, scrapes and GraphiQL's page are not worth a trace each.
          http: ({ request }) => new URL(request.url).pathname === graphqlEndpoint,
        },
      },
    }),
    clientSpans,
  ];
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
