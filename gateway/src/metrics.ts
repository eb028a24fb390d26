// /metrics in Prometheus format, and request durations by operation name.
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';
import { graphqlRequestHistogram } from '@ordergraph/common';
import type { Registry } from 'prom-client';

export function useMetrics(registry: Registry): GatewayPlugin {
  const histogram = graphqlRequestHistogram(registry);
  return {
    async onRequest({ url, endResponse }) {
      if (url.pathname !== '/metrics') return;
      endResponse(new Response(await registry.metrics(), { headers: { 'content-type': registry.contentType } }));
    },
    onExecute({ args }) {
      const end = histogram.startTimer();
      const operation = args.operationName ?? 'anonymous';
      return {
        onExecuteDone({ result }) {
          const failed = 'errors' in result && Array.isArray(result.errors) && result.errors.length > 0;
          end({ operation, status: failed ? 'error' : 'ok' });
        },
      };
    },
  };
}
