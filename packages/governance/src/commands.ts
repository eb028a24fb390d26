// The commands behind npm run compose, schema:check and schema:publish, as functions: each takes the command line
// and where to print, and returns the exit code. The scripts are their thin wrappers; tests call them in-process.
import { readFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { CompositionError, SUPERGRAPH_PATH, composeSupergraph, readSupergraphConfig, writeSupergraph } from '@ordergraph/composition';
import { BASELINE_DIR, publishBaselines, readBaselines } from './baseline.js';
import { checkApiSchema, checkSubgraphs, type UsageOptions } from './check.js';
import { readClientOperations, readOperations } from './operations.js';
import { CHECK_EXIT_CODES, checkFailed, formatReport } from './report.js';
import { fetchApiSchema, fetchSubgraphSdl } from './schema.js';

/** Where a command prints: `console` from the scripts. */
export interface CommandOutput {
  log(text: string): void;
  error(text: string): void;
}

const shown = (path: string) => relative(process.cwd(), path) || '.';

/**
 * npm run compose: supergraph.yaml -> supergraph.graphql. Exits 1 with the composition errors when the subgraphs do
 * not compose, or with --check when the file is stale.
 */
export function composeCommand(args: string[], out: CommandOutput): number {
  const { values } = parseArgs({ args, options: { check: { type: 'boolean', default: false }, config: { type: 'string' }, output: { type: 'string' } } });
  const output = values.output ? resolve(values.output) : SUPERGRAPH_PATH;
  let supergraph: string;
  try {
    supergraph = composeSupergraph(readSupergraphConfig(values.config && resolve(values.config)));
  } catch (error) {
    if (!(error instanceof CompositionError)) throw error;
    out.error(error.message);
    return 1;
  }
  let current = '';
  try {
    current = readFileSync(output, 'utf8');
  } catch {
    // Not written yet.
  }
  if (current === supergraph) {
    out.log(`${shown(output)} is up to date`);
  } else if (values.check) {
    out.error(`${shown(output)} is stale: run npm run compose and commit the result`);
    return 1;
  } else {
    // Atomically, so that a gateway polling this file never reads half of it.
    writeSupergraph(output, supergraph);
    out.log(`wrote ${shown(output)}`);
  }
  return 0;
}

/**
 * npm run schema:check: each subgraph's schema against the deployed baseline, or the composed API schema against a
 * running gateway's; with --operations, which known client operations the change breaks. Exits 1 on a breaking change
 * (unless --allow-unused-breaking and no known operation uses it), a broken known operation or a composition failure,
 * 2 when the check cannot run.
 */
export async function schemaCheckCommand(args: string[], out: CommandOutput): Promise<number> {
  try {
    const { values } = parseArgs({
      args,
      options: {
        baseline: { type: 'string' },
        'subgraph-url': { type: 'string', multiple: true },
        gateway: { type: 'string' },
        token: { type: 'string' },
        config: { type: 'string' },
        operations: { type: 'string', multiple: true },
        'operations-by-client': { type: 'string', multiple: true },
        'allow-unused-breaking': { type: 'boolean', default: false },
      },
    });
    const byClient = values['operations-by-client'];
    if (values['allow-unused-breaking'] && !values.operations && !byClient) {
      throw new Error('--allow-unused-breaking needs the operations clients send: --operations <manifest.json or folder>');
    }
    const usage: UsageOptions | undefined = (values.operations || byClient) && {
      operations: [...(values.operations ?? []).flatMap((path) => readOperations(resolve(path))), ...(byClient ?? []).flatMap((path) => readClientOperations(resolve(path)))],
      allowUnusedBreaking: values['allow-unused-breaking'],
    };
    const proposed = readSupergraphConfig(values.config && resolve(values.config));
    if (values.gateway) {
      const result = await checkApiSchema(proposed, await fetchApiSchema(values.gateway, values.token), usage);
      out.log(formatReport(result, `the API schema served at ${values.gateway}`));
      return checkFailed(result) ? CHECK_EXIT_CODES.failed : CHECK_EXIT_CODES.passed;
    }
    const dir = resolve(values.baseline ?? BASELINE_DIR);
    const baselines = readBaselines(dir);
    const fromUrls: string[] = [];
    for (const pair of values['subgraph-url'] ?? []) {
      const [name, url] = [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)];
      if (!name || !url) throw new Error(`--subgraph-url wants <name>=<url>, got "${pair}"`);
      baselines[name] = await fetchSubgraphSdl(url);
      fromUrls.push(`${name} at ${url}`);
    }
    const result = await checkSubgraphs(proposed, baselines, usage);
    out.log(formatReport(result, [`the baseline in ${shown(dir)}`, ...fromUrls].join(', ')));
    return checkFailed(result) ? CHECK_EXIT_CODES.failed : CHECK_EXIT_CODES.passed;
  } catch (error) {
    out.error(`schema check could not run (exit ${CHECK_EXIT_CODES.couldNotRun}): ${error instanceof Error ? error.message : String(error)}`);
    return CHECK_EXIT_CODES.couldNotRun;
  }
}

/**
 * npm run schema:publish: makes the current subgraph schemas the deployed baseline. Refuses (1) while the check finds
 * a breaking change, unless --allow-breaking; never publishes subgraphs that do not compose.
 */
export async function schemaPublishCommand(args: string[], out: CommandOutput): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { baseline: { type: 'string' }, config: { type: 'string' }, 'allow-breaking': { type: 'boolean', default: false } },
  });
  const proposed = readSupergraphConfig(values.config && resolve(values.config));
  const dir = resolve(values.baseline ?? BASELINE_DIR);
  const result = await checkSubgraphs(proposed, readBaselines(dir));
  if (result.compositionErrors.length || (result.breaking && !values['allow-breaking'])) {
    out.error(formatReport(result, `the baseline in ${shown(dir)}`));
    out.error(`\nNot published. ${result.compositionErrors.length ? 'Fix composition first.' : 'Publish a deliberate break with --allow-breaking.'}`);
    return 1;
  }
  const { written, removed } = publishBaselines(proposed, dir);
  out.log(`Published ${written.join(', ')} to ${shown(dir)}${removed.length ? `; dropped ${removed.join(', ')}` : ''}. Commit it with the release.`);
  return 0;
}
