// The schema check's report, written for a person and a CI log alike: a table with one row per change (its row of the
// Versioning table, and what to do instead under each breaking one), then a verdict naming the exit code.
import Table from 'cli-table3';
import type { CheckResult } from './check.js';

const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? '' : 's'}`;

/** What each exit code of schema:check means. */
export const CHECK_EXIT_CODES = { passed: 0, failed: 1, couldNotRun: 2 } as const;

export function formatReport(result: CheckResult, against: string): string {
  // No colours: CI logs and files show the escape codes as text.
  const table = new Table({
    head: ['Schema', 'Impact', 'Change', 'Where', 'Details'],
    colWidths: [null, null, null, null, 70],
    wordWrap: true,
    style: { head: [], border: [] },
  });
  const lines = [`Schema check against ${against}`, ''];
  for (const { name, hasBaseline, changes } of result.comparisons) {
    const breaking = changes.filter((change) => change.impact === 'breaking').length;
    if (!hasBaseline) lines.push(`${name}: new, no baseline yet (everything in it is an addition)`);
    else if (changes.length === 0) lines.push(`${name}: no changes`);
    else lines.push(`${name}: ${plural(changes.length, 'change')}, ${breaking ? `${breaking} breaking` : 'none breaking'}`);
    for (const change of changes) {
      const details = change.hint ? `${change.message}\n→ ${change.hint}` : change.message;
      table.push([name, change.impact === 'breaking' ? 'BREAKING' : 'ok', change.kind, change.path, details]);
    }
  }
  if (table.length > 0) lines.push('', table.toString());
  lines.push('');
  if (result.compositionErrors.length) {
    lines.push('Composition FAILED:', ...result.compositionErrors.map((error) => `  ${error}`));
  } else {
    lines.push('Composition: the proposed subgraphs compose.');
  }
  lines.push(
    checkFailed(result)
      ? `FAILED (exit ${CHECK_EXIT_CODES.failed}): ${plural(result.breaking, 'breaking change')}${result.compositionErrors.length ? ' and a composition failure' : ''}. Breaking changes block deployment.`
      : `PASSED (exit ${CHECK_EXIT_CODES.passed}): no breaking change.`,
  );
  return lines.join('\n');
}

export const checkFailed = (result: CheckResult): boolean => result.breaking > 0 || result.compositionErrors.length > 0;
