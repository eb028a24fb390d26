// A real OTLP/HTTP trace receiver for tests: POST /v1/traces in http/json or http/protobuf (decoded with the OTLP
// protobuf definitions that @opentelemetry/otlp-transformer 0.216 ships as protobufjs code), spans kept in memory.
import { createRequire } from 'node:module';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One received span, flattened: ids as lowercase hex, attributes as plain values, the sender's service.name. */
export interface ReceivedSpan {
  service: string;
  /** The sender's resource attributes (service.name among them). */
  resource: Record<string, unknown>;
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  links: { traceId: string; spanId: string }[];
  /** OTLP's status code (0 unset, 1 ok, 2 error) and message. */
  status: { code: number; message?: string };
  /** Its events (an `exception` for each error recorded), by name with their attributes. */
  events: { name: string; attributes: Record<string, unknown> }[];
  /** How it arrived: `json` or `protobuf`. */
  encoding: 'json' | 'protobuf';
}

export interface OtlpReceiver {
  /** The base URL to put in OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  /** Every span received so far, in arrival order. */
  spans: ReceivedSpan[];
  close(): Promise<void>;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
  arrayValue?: { values?: OtlpValue[] };
}
interface OtlpKeyValue {
  key: string;
  value?: OtlpValue;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind?: number;
  attributes?: OtlpKeyValue[];
  links?: { traceId: string; spanId: string }[];
  status?: { code?: number; message?: string };
  events?: { name: string; attributes?: OtlpKeyValue[] }[];
}
interface OtlpTraces {
  resourceSpans?: { resource?: { attributes?: OtlpKeyValue[] }; scopeSpans?: { spans?: OtlpSpan[] }[] }[];
}

interface ProtobufType {
  decode(buffer: Uint8Array): unknown;
  toObject(message: unknown, options: Record<string, unknown>): unknown;
}
const generated = createRequire(import.meta.url)('@opentelemetry/otlp-transformer/build/src/generated/root.js') as {
  opentelemetry: { proto: { collector: { trace: { v1: { ExportTraceServiceRequest: ProtobufType } } } } };
};
const ExportTraceServiceRequest = generated.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;

const valueOf = (value: OtlpValue | undefined): unknown =>
  value?.stringValue ??
  (value?.intValue !== undefined ? Number(value.intValue) : undefined) ??
  value?.boolValue ??
  value?.doubleValue ??
  value?.arrayValue?.values?.map(valueOf);
const attributesOf = (attributes: OtlpKeyValue[] = []) => Object.fromEntries(attributes.map(({ key, value }) => [key, valueOf(value)]));

/** OTLP/JSON carries ids as hex; protobuf as bytes (given here as base64 by protobufjs). */
const hexId = (id: string | undefined, encoding: ReceivedSpan['encoding']) =>
  !id ? undefined : encoding === 'json' ? id.toLowerCase() : Buffer.from(id, 'base64').toString('hex');

function flatten(traces: OtlpTraces, encoding: ReceivedSpan['encoding']): ReceivedSpan[] {
  return (traces.resourceSpans ?? []).flatMap(({ resource, scopeSpans = [] }) => {
    const attributes = attributesOf(resource?.attributes);
    return scopeSpans.flatMap(({ spans = [] }) =>
      spans.map((span) => ({
        service: String(attributes['service.name']),
        resource: attributes,
        traceId: hexId(span.traceId, encoding)!,
        spanId: hexId(span.spanId, encoding)!,
        parentSpanId: hexId(span.parentSpanId, encoding),
        name: span.name,
        kind: span.kind ?? 0,
        attributes: attributesOf(span.attributes),
        links: (span.links ?? []).map((link) => ({ traceId: hexId(link.traceId, encoding)!, spanId: hexId(link.spanId, encoding)! })),
        status: { code: span.status?.code ?? 0, ...(span.status?.message ? { message: span.status.message } : {}) },
        events: (span.events ?? []).map((event) => ({ name: event.name, attributes: attributesOf(event.attributes) })),
        encoding,
      })),
    );
  });
}

function decode(body: Buffer, contentType: string): ReceivedSpan[] {
  if (contentType.startsWith('application/json')) return flatten(JSON.parse(body.toString('utf8')) as OtlpTraces, 'json');
  if (contentType.startsWith('application/x-protobuf')) {
    const message = ExportTraceServiceRequest.toObject(ExportTraceServiceRequest.decode(body), { bytes: String, longs: String, enums: Number, defaults: false });
    return flatten(message as OtlpTraces, 'protobuf');
  }
  throw new Error(`unsupported content-type ${contentType}`);
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.method !== 'POST' || request.url !== '/v1/traces') {
        response.writeHead(404).end();
        return;
      }
      const contentType = request.headers['content-type'] ?? '';
      try {
        spans.push(...decode(Buffer.concat(chunks), contentType));
      } catch (error) {
        response.writeHead(400, { 'content-type': 'text/plain' }).end(String(error));
        return;
      }
      // An empty ExportTraceServiceResponse: full success.
      if (contentType.startsWith('application/json')) response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      else response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
