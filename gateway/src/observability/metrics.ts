// /metrics in Prometheus format: requests by operation and client (bounded sets of names), every subgraph call, plus
// what other modules register (subscriptions, Redis, Node's process metrics).
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';
import { getOperationAST, type DocumentNode, type GraphQLError } from 'graphql';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { graphqlRequestHistogram } from '@ordergraph/core';
import { clientOf, type ClientIdentity } from '../clients/identity.js';
import { clientLeft } from '../shared/request-signals.js';

const OTHER = 'other';
const TIMEOUT_CODES = new Set(['TIMEOUT', 'GATEWAY_TIMEOUT', 'SUBGRAPH_TIMEOUT', 'UPSTREAM_TIMEOUT']);
const SAFE_CODE = /^[A-Z][A-Z0-9_]{0,39}$/;

/**
 * The names an operation is counted under: its own while fewer than `maxNames` are known, else "other", so a client
 * cannot grow the series (and the parser refuses names over MAX_OPERATION_NAME_LENGTH).
 */
function operationLabels(maxNames: number) {
  const known = new Set<string>();
  const byDocument = new WeakMap<DocumentNode, string>();
  return (document: DocumentNode, operationName: string | null | undefined): string => {
    const cached = operationName ? undefined : byDocument.get(document);
    if (cached) return cached;
    const name = getOperationAST(document, operationName)?.name?.value ?? 'anonymous';
    const label = known.has(name) || (known.size < maxNames && known.add(name)) ? name : OTHER;
    if (!operationName) byDocument.set(document, label);
    return label;
  };
}

export interface MetricsSettings {
  /** Distinct operation names labelled (METRICS_OPERATION_NAMES). */
  operationNames: number;
  /** Distinct client names labelled (METRICS_CLIENT_NAMES). */
  clientNames: number;
  /** Distinct client name and version pairs labelled (METRICS_CLIENT_VERSIONS). */
  clientVersions: number;
}

/**
 * The labels a client is counted under, bounded as operation names are: its name while fewer than `maxNames` are
 * known, else "other" (with version "other"); its version while fewer than `maxVersions` name and version pairs are
 * known, else "other" under its name. The names themselves were bounded in length and characters (clients/identity.ts).
 */
export function clientLabels(maxNames: number, maxVersions: number) {
  const names = new Set<string>();
  const versions = new Set<string>();
  return ({ name, version }: ClientIdentity): { client_name: string; client_version: string } => {
    if (!(names.has(name) || (names.size < maxNames && names.add(name)))) return { client_name: OTHER, client_version: OTHER };
    const pair = `${name}\u0000${version}`;
    return { client_name: name, client_version: versions.has(pair) || (versions.size < maxVersions && versions.add(pair)) ? version : OTHER };
  };
}

const codeOf = (error: Pick<GraphQLError, 'extensions'> | undefined): string => {
  const code = error?.extensions?.['code'];
  return typeof code === 'string' && SAFE_CODE.test(code) ? code : 'UNKNOWN';
};
const isTimeout = (error: unknown, code: string) =>
  TIMEOUT_CODES.has(code) || (error instanceof Error && (error.name === 'TimeoutError' || /timed? ?out/i.test(error.message)));

export function useMetrics(registry: Registry, settings: MetricsSettings): GatewayPlugin {
  const requests = graphqlRequestHistogram(registry, ['client_name', 'client_version']);
  const operationErrors = new Counter({
    name: 'graphql_operation_errors_total',
    help: 'Errors in GraphQL responses by operation name (from the parsed document), code and client',
    labelNames: ['operation', 'code', 'client_name', 'client_version'],
    registers: [registry],
  });
  const subgraphDuration = new Histogram({
    name: 'gateway_subgraph_request_duration_seconds',
    help: 'Duration of calls to each subgraph',
    labelNames: ['subgraph'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  const subgraphErrors = new Counter({
    name: 'gateway_subgraph_errors_total',
    help: 'Errors from each subgraph by code (a failed call counts once, with the code it failed with)',
    labelNames: ['subgraph', 'code'],
    registers: [registry],
  });
  const subgraphTimeouts = new Counter({
    name: 'gateway_subgraph_timeouts_total',
    help: 'Calls to each subgraph that timed out',
    labelNames: ['subgraph'],
    registers: [registry],
  });
  const inFlight = new Gauge({ name: 'gateway_subgraph_requests_in_flight', help: 'Calls to each subgraph awaiting an answer', labelNames: ['subgraph'], registers: [registry] });
  const operationOf = operationLabels(settings.operationNames);
  const clientLabelsOf = clientLabels(settings.clientNames, settings.clientVersions);
  // Series start at zero when a subgraph is first called, so rate() and alerts see them before the first timeout.
  const seen = new Set<string>();
  const firstCall = (subgraph: string) => {
    seen.add(subgraph);
    subgraphTimeouts.inc({ subgraph }, 0);
  };

  const recordErrors = (subgraph: string, errors: readonly unknown[]) => {
    for (const error of errors) {
      const code = codeOf(error as GraphQLError);
      subgraphErrors.inc({ subgraph, code });
      if (isTimeout(error, code)) subgraphTimeouts.inc({ subgraph });
    }
  };

  return {
    // Not async itself: every request passes this hook, and should not pay for a promise.
    onRequest({ url, endResponse }) {
      if (url.pathname !== '/metrics') return undefined;
      return registry.metrics().then((text) => endResponse(new Response(text, { headers: { 'content-type': registry.contentType } })));
    },
    onExecute({ args }) {
      const end = requests.startTimer();
      const operation = operationOf(args.document, args.operationName);
      const client = clientLabelsOf(clientOf(args.contextValue));
      return {
        onExecuteDone({ result }) {
          // The errors of a request whose client left are the gateway's own cancelling: not the operation's, nor a subgraph's.
          if (clientLeft(args.contextValue)) {
            end({ operation, status: 'client_closed', ...client });
            return;
          }
          const errors = 'errors' in result && Array.isArray(result.errors) ? (result.errors as GraphQLError[]) : [];
          for (const error of errors) operationErrors.inc({ operation, code: codeOf(error), ...client });
          end({ operation, status: errors.length > 0 ? 'error' : 'ok', ...client });
        },
      };
    },
    // One timer per subgraph call (never per field); subscriptions are counted by subscriptions/tracking.ts instead.
    onSubgraphExecute({ subgraphName: subgraph, executionRequest }) {
      if (executionRequest.operationType === 'subscription') return;
      if (!seen.has(subgraph)) firstCall(subgraph);
      inFlight.inc({ subgraph });
      const end = subgraphDuration.startTimer({ subgraph });
      return ({ result }) => {
        inFlight.dec({ subgraph });
        end();
        if (!(Symbol.asyncIterator in result) && result.errors?.length && !clientLeft(executionRequest.context)) recordErrors(subgraph, result.errors);
      };
    },
  };
}
