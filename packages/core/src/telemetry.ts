// OpenTelemetry tracing for every process, configured only by the standard OTEL_* variables. Off unless
// OTEL_EXPORTER_OTLP_ENDPOINT is set, and then free: no OpenTelemetry package is loaded and nothing runs per request.
import type * as OpenTelemetryApi from '@opentelemetry/api';
import { loadConfig, telemetryEnvSchema } from './config.js';
import { addLineContext, createLogger } from './logger.js';

export interface Telemetry {
  /** Exports the spans still buffered; the process calls it last, after its server has stopped. */
  shutdown(): Promise<void>;
}

export interface TelemetryOptions {
  /**
   * Instrument node's HTTP server and client, fetch (undici) and graphql-js: a subgraph's request spans, continued from
   * the caller's `traceparent`, and the same header on its calls to other subgraphs. The gateway leaves this off: Hive's
   * OpenTelemetry plugin traces its requests and subgraph fetches itself.
   */
  instrument: boolean;
  /**
   * Span processors that run before the exporters' own (those OTEL_TRACES_EXPORTER and the OTLP variables configure),
   * to amend a span in `onEnding`, while it can still be changed.
   */
  spanProcessors?: SpanAmender[];
}

/** A span processor that amends spans as they end (OpenTelemetry's SpanProcessor, its `onEnding` given). */
export interface SpanAmender {
  onStart(): void;
  onEnding(span: EndingSpan): void;
  onEnd(): void;
  forceFlush(): Promise<void>;
  shutdown(): Promise<void>;
}

/** The part of an ending span (the SDK's Span, still writable in `onEnding`) an amender reads and changes. */
export interface EndingSpan {
  status: { code: number; message?: string };
  readonly events: readonly { name: string; attributes?: Record<string, unknown> }[];
  setAttribute(key: string, value: string | number | boolean): unknown;
}

/** The API, once the SDK has started; unset while tracing is off. */
let api: typeof OpenTelemetryApi | undefined;

/** Probes, scrapes and the landing page are not worth a trace each. */
const UNTRACED_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

async function nodeInstrumentations() {
  const [{ HttpInstrumentation }, { UndiciInstrumentation }, { GraphQLInstrumentation }] = await Promise.all([
    import('@opentelemetry/instrumentation-http'),
    import('@opentelemetry/instrumentation-undici'),
    import('@opentelemetry/instrumentation-graphql'),
  ]);
  return [
    new HttpInstrumentation({ ignoreIncomingRequestHook: (request) => UNTRACED_PATHS.has((request.url ?? '').split('?')[0]!) }),
    new UndiciInstrumentation(),
    // Spans for parse, validate, execute and each resolver that does work (not for a field read off its parent).
    new GraphQLInstrumentation({ ignoreTrivialResolveSpans: true, mergeItems: true }),
  ];
}

type NodeSdkOptions = NonNullable<ConstructorParameters<typeof import('@opentelemetry/sdk-node').NodeSDK>[0]>;

/**
 * The processors the SDK builds from OTEL_TRACES_EXPORTER and the OTLP variables when given none: given processors of
 * our own, it builds none, so they are asked for here. The SDK does not export the function (its package has no
 * `exports` map, so the module is reachable); e2e/opentelemetry.test.ts fails if it moves.
 */
async function exportingProcessors(): Promise<unknown[]> {
  const { getSpanProcessorsFromEnv } = commonJs((await import('@opentelemetry/sdk-node/build/src/utils.js' as string)) as { getSpanProcessorsFromEnv(): unknown[] });
  return getSpanProcessorsFromEnv();
}

/**
 * A CommonJS module's exports as `import()` gives them: Node names them and also gives them whole as the default export;
 * a bundle split by esbuild (the gateway's, gateway/scripts/bundle.ts) gives only the default.
 */
function commonJs<T extends object>(module: T): T {
  return (module as { default?: T }).default ?? module;
}

/**
 * Starts the OpenTelemetry Node SDK when OTEL_EXPORTER_OTLP_ENDPOINT is set; the SDK itself reads the exporter's
 * protocol, the sampler and the resource from the OTEL_* variables. Call it before anything imports `http`, express
 * or graphql, so that their instrumentation can wrap them. An invalid OTEL_* value ends the process as any invalid
 * setting does (runProcess is not running yet): one fatal JSON line naming the variable, exit code 1.
 */
export async function startTelemetry(service: string, { instrument, spanProcessors = [] }: TelemetryOptions): Promise<Telemetry | undefined> {
  let settings;
  try {
    settings = loadConfig(telemetryEnvSchema);
  } catch (error) {
    createLogger(service).fatal({ err: error }, 'failed to start');
    process.exit(1);
  }
  if (!settings.OTEL_EXPORTER_OTLP_ENDPOINT) return undefined;
  const [{ NodeSDK }, otel, instrumentations, exporters] = await Promise.all([
    import('@opentelemetry/sdk-node').then(commonJs),
    import('@opentelemetry/api'),
    instrument ? nodeInstrumentations() : Promise.resolve([]),
    spanProcessors.length ? exportingProcessors() : Promise.resolve(undefined),
  ]);
  const named = settings.OTEL_SERVICE_NAME !== undefined || /(^|,)\s*service\.name=/.test(settings.OTEL_RESOURCE_ATTRIBUTES ?? '');
  const sdk = new NodeSDK({
    ...(named ? {} : { serviceName: service }),
    instrumentations,
    ...(exporters ? { spanProcessors: [...spanProcessors, ...exporters] as NonNullable<NodeSdkOptions['spanProcessors']> } : {}),
    // Traces only: metrics are served to Prometheus on /metrics, logs are JSON lines on stdout.
    metricReaders: [],
    logRecordProcessors: [],
  });
  sdk.start();
  api = otel;
  addLineContext(() => {
    const span = otel.trace.getActiveSpan()?.spanContext();
    return span && otel.isSpanContextValid(span) ? { trace_id: span.traceId, span_id: span.spanId } : undefined;
  });
  return { shutdown: () => sdk.shutdown() };
}

/** W3C trace context headers (`traceparent`, `tracestate`) a message carries to whoever handles it. */
export type TraceCarrier = Record<string, string>;

/** The current trace context, to send along with a message; undefined while tracing is off. */
export function currentTraceCarrier(): TraceCarrier | undefined {
  if (!api) return undefined;
  const carrier: TraceCarrier = {};
  api.propagation.inject(api.context.active(), carrier);
  return carrier['traceparent'] ? carrier : undefined;
}

/**
 * Records the delivery of a message as a consumer span, the root of a trace of its own (one event reaches many
 * subscribers, long after its sender's trace ended) linked to the trace the message was sent from (its carrier): a
 * delivered subscription event leads back to the mutation that caused it.
 */
export function recordDelivery(name: string, carrier: TraceCarrier | undefined, attributes: Record<string, string>): void {
  if (!api) return;
  const sentFrom = carrier ? api.trace.getSpanContext(api.propagation.extract(api.ROOT_CONTEXT, carrier)) : undefined;
  const links = sentFrom && api.isSpanContextValid(sentFrom) ? [{ context: sentFrom }] : [];
  api.trace.getTracer('ordergraph').startSpan(name, { root: true, kind: api.SpanKind.CONSUMER, attributes, links }).end();
}

/**
 * Adds attributes to the span of an OpenTelemetry context (one Hive's plugin hands out for a subgraph call, say), else to
 * the span active now; nothing while tracing is off.
 */
export function setSpanAttributes(context: unknown, attributes: Record<string, string | number | boolean>): void {
  if (!api) return;
  const span = context ? api.trace.getSpan(context as OpenTelemetryApi.Context) : api.trace.getActiveSpan();
  span?.setAttributes(attributes);
}
