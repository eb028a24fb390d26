// npm run schema:publish: at release, makes the current subgraph schemas the deployed baseline (schemas/baseline), so
// the next check compares against them and fields deprecated in this release may be removed in the next one.
// Refuses while the check finds a breaking change, unless --allow-breaking (a deliberate, announced break); never
// publishes subgraphs that do not compose.
//   --baseline <dir>  --config <supergraph.yaml>  --allow-breaking
import { relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { BASELINE_DIR, checkSubgraphs, formatReport, publishBaselines, readBaselines } from '@ordergraph/governance';
import { readSupergraphConfig } from '@ordergraph/gateway/supergraph';

const { values } = parseArgs({
  options: { baseline: { type: 'string' }, config: { type: 'string' }, 'allow-breaking': { type: 'boolean', default: false } },
});

const proposed = readSupergraphConfig(values.config && resolve(values.config));
const dir = resolve(values.baseline ?? BASELINE_DIR);
const where = relative(process.cwd(), dir) || '.';
const result = await checkSubgraphs(proposed, readBaselines(dir));
if (result.compositionErrors.length || (result.breaking && !values['allow-breaking'])) {
  console.error(formatReport(result, `the baseline in ${where}`));
  console.error(`\nNot published. ${result.compositionErrors.length ? 'Fix composition first.' : 'Publish a deliberate break with --allow-breaking.'}`);
  process.exit(1);
}
const { written, removed } = publishBaselines(proposed, dir);
console.log(`Published ${written.join(', ')} to ${where}${removed.length ? `; dropped ${removed.join(', ')}` : ''}. Commit it with the release.`);
