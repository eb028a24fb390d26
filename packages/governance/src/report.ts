// The schema check's report, written for a person and a CI log alike: a table with one row per change (its row of the
// Versioning table, and what to do instead under each breaking one), the known operations the change breaks (one row
// each, with why), then a verdict naming the exit code.
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
  if (result.operations) lines.push('', ...operationsSection(result.operations));
  lines.push('');
  if (result.compositionErrors.length) {
    lines.push('Composition FAILED:', ...result.compositionErrors.map((error) => `  ${error}`));
  } else {
    lines.push('Composition: the proposed subgraphs compose.');
  }
  lines.push(verdict(result));
  return lines.join('\n');
}

const clientList = (clients: string[]) => (clients.length ? ` [clients: ${clients.join(', ')}]` : '');

function operationsSection(operations: NonNullable<CheckResult['operations']>): string[] {
  const { checked, broken, stale, usageKnown, affected } = operations;
  const lines = [
    `Known operations: ${checked} checked, ${broken.length} broken by this change${stale.length ? `, ${stale.length} already invalid against the deployed schema` : ''}.`,
  ];
  if (!usageKnown) lines.push('(The deployed subgraphs do not compose here: operations were validated against the proposed schema only.)');
  // A list, not a table: ids and validation messages are long, and a CI log reads (and greps) them best whole.
  for (const [status, entries] of [['BROKEN', broken], ['already invalid', stale]] as const) {
    for (const { name, id, reasons, clients } of entries) {
      lines.push(`  ${status}: ${name}${id === name ? '' : ` (${id})`}${clientList(clients)}`, ...reasons.map((reason) => `    - ${reason}`));
    }
  }
  if (affected.length > 0) {
    lines.push('Clients affected, by breaking change:');
    for (const { change, clients, operations: using, unnamed } of affected) {
      const who = [...clients, ...(unnamed ? [`${plural(unnamed, 'operation')} of no client named`] : [])];
      lines.push(`  ${change.path} (${change.kind}): ${using === 0 ? 'no known operation uses it' : `${who.join(', ')} (${plural(using, 'operation')})`}`);
    }
  }
  return lines;
}

function verdict(result: CheckResult): string {
  const broken = result.operations?.broken.length ?? 0;
  const known = result.operations ? `${broken} of ${plural(result.operations.checked, 'known operation')} broken` : '';
  if (checkFailed(result)) {
    const reasons = [
      ...(result.breaking > 0 || !result.operations ? [plural(result.breaking, 'breaking change')] : []),
      ...(result.operations ? [known] : []),
      ...(result.compositionErrors.length ? ['a composition failure'] : []),
    ];
    const waivable = result.operations && broken === 0 && result.breaking > 0 && !result.compositionErrors.length;
    return (
      `FAILED (exit ${CHECK_EXIT_CODES.failed}): ${reasons.join(', ')}. ${broken ? 'A change that breaks a known operation' : 'Breaking changes'} block${broken ? 's' : ''} deployment.` +
      (waivable ? ' No known operation uses what breaks: --allow-unused-breaking would let it pass.' : '')
    );
  }
  if (result.breaking > 0) {
    return `PASSED (exit ${CHECK_EXIT_CODES.passed}): ${plural(result.breaking, 'breaking change')}, but none of the ${plural(result.operations!.checked, 'known operation')} uses what breaks (--allow-unused-breaking).`;
  }
  return `PASSED (exit ${CHECK_EXIT_CODES.passed}): no breaking change.${result.operations ? ` None of the ${plural(result.operations.checked, 'known operation')} breaks.` : ''}`;
}

/**
 * Fails on a composition failure, on a known operation the change breaks, and on a breaking change, unless the check
 * was given the operations clients send and --allow-unused-breaking (then a breaking change none of them uses passes).
 */
export const checkFailed = (result: CheckResult): boolean =>
  result.compositionErrors.length > 0 ||
  (result.operations?.broken.length ?? 0) > 0 ||
  (result.breaking > 0 && !result.operations?.allowUnusedBreaking);
