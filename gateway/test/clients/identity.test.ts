// Who the client is: the headers' declared name and version, bounded in length and characters, Apollo's before Hive's.
import { describe, expect, it } from 'vitest';
import { UNIDENTIFIED, clientName, clientOf, clientVersion, declaredClient } from '../../src/clients/identity.js';

const headers = (entries: Record<string, string>) => new Headers(entries);

describe('declaredClient', () => {
  it("reads Apollo's headers first, then Hive's, each name with its own version", () => {
    expect(declaredClient(headers({ 'apollographql-client-name': 'web', 'apollographql-client-version': '1.4.2' }))).toEqual({ name: 'web', version: '1.4.2', source: 'header' });
    expect(declaredClient(headers({ 'graphql-client-name': 'ios', 'graphql-client-version': '7.0.0-beta.1+204' }))).toEqual({ name: 'ios', version: '7.0.0-beta.1+204', source: 'header' });
    expect(declaredClient(headers({ 'x-graphql-client-name': 'cli' }))).toEqual({ name: 'cli', version: 'unknown', source: 'header' });
    // Both sent: Apollo's pair wins, its version not mixed with Hive's.
    expect(
      declaredClient(headers({ 'apollographql-client-name': 'web', 'graphql-client-name': 'ios', 'graphql-client-version': '9' })),
    ).toEqual({ name: 'web', version: 'unknown', source: 'header' });
  });

  it('takes no name that is too long or holds other characters, and then reads the next pair or none', () => {
    expect(declaredClient(headers({}))).toBeUndefined();
    expect(declaredClient(headers({ 'apollographql-client-name': 'x'.repeat(65) }))).toBeUndefined();
    expect(declaredClient(headers({ 'apollographql-client-name': 'x'.repeat(64) }))?.name).toBe('x'.repeat(64));
    expect(declaredClient(headers({ 'apollographql-client-name': 'web"} 1 fake_metric{a="2', 'graphql-client-name': 'ios' }))?.name).toBe('ios');
    expect(declaredClient(headers({ 'apollographql-client-name': 'wéb' }))).toBeUndefined();
    // A bad version leaves the name standing.
    expect(declaredClient(headers({ 'apollographql-client-name': 'web', 'apollographql-client-version': 'v'.repeat(33) }))?.version).toBe('unknown');
  });

  it('accepts the names clients are given in practice', () => {
    for (const name of ['web', 'Apollo iOS', '@acme/web', 'web-app:prod', 'android_v2', 'Hive Dev Fetcher']) expect(clientName(name)).toBe(name);
    for (const name of ['', ' web', 'web ', '-web', 'a,b', 'a=b', 'a"b', '<script>']) expect(clientName(name)).toBeUndefined();
    for (const version of ['1.2.3', '2026.11.27', 'a1b2c3d', '1.0.0-rc.1+build.5']) expect(clientVersion(version)).toBe(version);
    for (const version of ['', '.1', '1 2', '1/2']) expect(clientVersion(version)).toBeUndefined();
  });
});

it('clientOf: unknown before the client was identified', () => {
  expect(clientOf({})).toBe(UNIDENTIFIED);
  expect(clientOf(undefined)).toBe(UNIDENTIFIED);
  expect(clientOf({ client: { name: 'web', version: '1', source: 'header' } })).toEqual({ name: 'web', version: '1', source: 'header' });
});
