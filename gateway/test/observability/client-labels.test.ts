// The labels a client is counted under on /metrics: bounded however many names and versions clients invent.
import { expect, it } from 'vitest';
import { clientLabels } from '../../src/observability/metrics.js';

const client = (name: string, version = '1') => ({ name, version, source: 'header' as const });

it('labels the first names and name/version pairs seen, and counts the rest as other', () => {
  const labels = clientLabels(2, 3);
  expect(labels(client('web', '1'))).toEqual({ client_name: 'web', client_version: '1' });
  expect(labels(client('ios', '7'))).toEqual({ client_name: 'ios', client_version: '7' });
  expect(labels(client('android'))).toEqual({ client_name: 'other', client_version: 'other' });
  expect(labels(client('web', '2'))).toEqual({ client_name: 'web', client_version: '2' });
  // Pairs are spent: a new version of a known client keeps its name.
  expect(labels(client('web', '3'))).toEqual({ client_name: 'web', client_version: 'other' });
  // Known ones stay themselves.
  expect(labels(client('web', '1'))).toEqual({ client_name: 'web', client_version: '1' });
  const seen = new Set<string>();
  for (let i = 0; i < 1000; i++) seen.add(JSON.stringify(labels(client(`invented-${i}`, String(i)))));
  expect(seen).toEqual(new Set([JSON.stringify({ client_name: 'other', client_version: 'other' })]));
});
