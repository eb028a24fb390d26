// The schema check's report, written for a CI log: one line per change with its row of the Versioning table, what to
// do instead under each breaking one, and a verdict at the end.
import type { CheckResult } from './check.js';

const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? '' : 's'}`;

export function formatReport(result: CheckResult, against: string): string {
  const lines = [`Schema check against ${against}`, ''];
  for (const { name, hasBaseline, changes } of result.comparisons) {
    const breaking = changes.filter((change) => change.impact === 'breaking').length;
    if (!hasBaseline) lines.push(`${name}: new, no baseline yet (everything in it is an addition)`);
    else if (changes.length === 0) lines.push(`${name}: no changes`);
    else lines.push(`${name}: ${plural(changes.length, 'change')}, ${breaking ? `${breaking} breaking` : 'none breaking'}`);
    for (const change of changes) {
      lines.push(`  ${change.impact === 'breaking' ? 'BREAKING' : 'ok      '}  ${change.kind}: ${change.path} — ${change.message}`);
      if (change.hint) lines.push(`            → ${change.hint}`);
    }
  }
  lines.push('');
  if (result.compositionErrors.length) {
    lines.push('Composition FAILED:', ...result.compositionErrors.map((error) => `  ${error}`));
  } else {
    lines.push('Composition: the proposed subgraphs compose.');
  }
  lines.push(
    checkFailed(result)
      ? `FAILED: ${plural(result.breaking, 'breaking change')}${result.compositionErrors.length ? ' and a composition failure' : ''}. Breaking changes block deployment.`
      : 'PASSED: no breaking change.',
  );
  return lines.join('\n');
}

export const checkFailed = (result: CheckResult): boolean => result.breaking > 0 || result.compositionErrors.length > 0;
