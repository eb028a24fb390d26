// npm run schema:check: each subgraph's schema (as supergraph.yaml lists them) against the deployed baseline,
// every change classified by the spec's Versioning table. Exits 1 on a breaking change or a composition failure,
// 2 when the check cannot run (an unreachable URL, for instance).
//   --baseline <dir>             baseline SDL files, one per subgraph (default: the committed schemas/baseline)
//   --subgraph-url <name>=<url>  take that subgraph's baseline from its running deployment (`_service { sdl }`)
//   --gateway <url>              instead, compare the composed API schema with a running gateway's (introspection)
//   --token <jwt>                bearer token for --gateway where introspection is for administrators only
//   --config <supergraph.yaml>   another supergraph config
import { relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { BASELINE_DIR, checkApiSchema, checkFailed, checkSubgraphs, fetchApiSchema, fetchSubgraphSdl, formatReport, readBaselines } from '@ordergraph/governance';
import { readSupergraphConfig } from '@ordergraph/gateway/supergraph';

const { values } = parseArgs({
  options: {
    baseline: { type: 'string' },
    'subgraph-url': { type: 'string', multiple: true },
    gateway: { type: 'string' },
    token: { type: 'string' },
    config: { type: 'string' },
  },
});

try {
  const proposed = readSupergraphConfig(values.config && resolve(values.config));
  if (values.gateway) {
    const result = await checkApiSchema(proposed, await fetchApiSchema(values.gateway, values.token));
    console.log(formatReport(result, `the API schema served at ${values.gateway}`));
    process.exitCode = checkFailed(result) ? 1 : 0;
  } else {
    const dir = resolve(values.baseline ?? BASELINE_DIR);
    const baselines = readBaselines(dir);
    const fromUrls: string[] = [];
    for (const pair of values['subgraph-url'] ?? []) {
      const [name, url] = [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)];
      if (!name || !url) throw new Error(`--subgraph-url wants <name>=<url>, got "${pair}"`);
      baselines[name] = await fetchSubgraphSdl(url);
      fromUrls.push(`${name} at ${url}`);
    }
    const result = await checkSubgraphs(proposed, baselines);
    const against = [`the baseline in ${relative(process.cwd(), dir) || '.'}`, ...fromUrls].join(', ');
    console.log(formatReport(result, against));
    process.exitCode = checkFailed(result) ? 1 : 0;
  }
} catch (error) {
  console.error(`schema check could not run: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 2;
}
