// Which custom labels a request turns on, and which supergraphs the JavaScript planner is refused: the decisions
// progressive-override.ts makes before the planner is called.
import { describe, expect, it } from 'vitest';
import type { UnifiedGraphHandler } from '@graphql-hive/gateway-runtime';
import { hasLabelledOverride, namesOverrideLabels, requestOverrideLabels, withOverrideLabels, withPlannableOverrides, type OverrideLabelSettings } from '../../src/execution/progressive-override.js';

const VIEWER = { userId: 'VXNlcjp1c2VyLTAwMDE=', role: 'USER' } as const;
/** A token's shape, unsigned: the handler reads the claims of a token auth.ts has already verified. */
const bearer = (claims: Record<string, unknown>) => `Bearer e30.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.signature`;
const context = (headers: Record<string, string>, viewer: typeof VIEWER | null = null) => ({ request: new Request('http://gateway/graphql', { headers }), viewer });

type Decide = (label: string, context: unknown) => boolean;
/** The handleProgressiveOverride the planner's handler is given; undefined when it is given the options untouched. */
function overrideLabelHandler(settings: OverrideLabelSettings): Decide | undefined {
  let given: Decide | undefined;
  const planner = ((options: { handleProgressiveOverride?: Decide }) => {
    given = options.handleProgressiveOverride;
    return {};
  }) as unknown as UnifiedGraphHandler;
  const wrapped = withOverrideLabels(planner, settings);
  if (wrapped === planner) return undefined;
  void wrapped({} as never);
  return given;
}

describe('withOverrideLabels', () => {
  it('leaves the handler as it is when neither setting is given: no label is ever on', () => {
    expect(overrideLabelHandler({})).toBeUndefined();
  });

  it('turns on the comma-separated labels of the header, trimmed, and no others', () => {
    const on = overrideLabelHandler({ header: 'x-override-labels' })!;
    const request = context({ 'x-override-labels': ' beta ,, fast-eta' });
    expect([on('beta', request), on('fast-eta', request), on('gamma', request), on('beta', context({}))]).toEqual([true, true, false, false]);
  });

  it("turns on the claim's labels, an array or a comma-separated string, for a verified viewer only", () => {
    const on = overrideLabelHandler({ claim: 'override_labels' })!;
    expect(on('beta', context({ authorization: bearer({ override_labels: ['beta', 7] }) }, VIEWER))).toBe(true);
    expect(on('beta', context({ authorization: bearer({ override_labels: 'alpha, beta' }) }, VIEWER))).toBe(true);
    expect(on('beta', context({ authorization: bearer({ override_labels: ['beta'] }) }, null))).toBe(false);
    expect(on('beta', context({ authorization: 'Bearer not-a-jwt' }, VIEWER))).toBe(false);
    expect(on('beta', context({ authorization: 'Bearer a.%%%.c' }, VIEWER))).toBe(false);
  });

  it('answers false for a context that is not an object', () => {
    expect(overrideLabelHandler({ header: 'x-override-labels' })!('beta', undefined)).toBe(false);
  });
});

describe('requestOverrideLabels', () => {
  it("gives the labels of header and claim together (subscription sharing keys on them), read once per request", () => {
    const labelsOf = requestOverrideLabels({ header: 'x-override-labels', claim: 'override_labels' });
    const request = context({ 'x-override-labels': 'beta', authorization: bearer({ override_labels: ['gamma'] }) }, VIEWER);
    expect([...labelsOf(request)].sort()).toEqual(['beta', 'gamma']);
    expect(labelsOf(request)).toBe(labelsOf(request));
    expect(requestOverrideLabels({})(request).size).toBe(0);
  });
});

describe('namesOverrideLabels', () => {
  const request = (headers: Record<string, string>) => new Request('http://gateway/graphql', { headers });
  it('is true only for a configured header holding a label', () => {
    expect(namesOverrideLabels(request({ 'x-override-labels': 'beta' }), 'x-override-labels')).toBe(true);
    expect(namesOverrideLabels(request({ 'x-override-labels': ' , ' }), 'x-override-labels')).toBe(false);
    expect(namesOverrideLabels(request({ 'x-override-labels': 'beta' }), undefined)).toBe(false);
  });
});

describe('labelled overrides and the JavaScript planner', () => {
  const LABELLED = 'type Order { eta: String! @join__field(graph: A, overrideLabel: "percent(25)") @join__field(graph: B, override: "a", overrideLabel: "percent(25)") }';
  const UNLABELLED = 'type Order { eta: String! @join__field(graph: B, override: "a") }';

  it('finds a labelled @override in a supergraph, not an unlabelled one', () => {
    expect([hasLabelledOverride(LABELLED), hasLabelledOverride(UNLABELLED)]).toEqual([true, false]);
  });

  it('refuses a labelled supergraph on js, a string at once, a source on each read; passes everything on rust', async () => {
    expect(() => withPlannableOverrides(LABELLED, true)).toThrow(/QUERY_PLANNER=rust/);
    expect(withPlannableOverrides(UNLABELLED, true)).toBe(UNLABELLED);
    expect(withPlannableOverrides(LABELLED, false)).toBe(LABELLED);
    let served = UNLABELLED;
    const source = withPlannableOverrides(() => served, true);
    expect(source()).toBe(UNLABELLED);
    served = LABELLED;
    expect(() => source()).toThrow(/QUERY_PLANNER=rust/);
    await expect(withPlannableOverrides(() => Promise.resolve(LABELLED), true)()).rejects.toThrow(/QUERY_PLANNER=rust/);
  });
});
