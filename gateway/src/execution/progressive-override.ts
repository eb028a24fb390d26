// Progressive override (`@override(from: "orders", label: ...)`): which of a supergraph's custom labels a request turns
// on, and the planner that refuses labels it cannot serve consistently. docs/progressive-override.md tells the whole story.
import type { UnifiedGraphHandler } from '@graphql-hive/gateway-runtime';
import type { Viewer } from '@ordergraph/core';
import { verifiedClaims } from './operation.js';

export interface OverrideLabelSettings {
  /** The request header whose comma-separated labels are turned on; undefined: none is read. */
  header?: string | undefined;
  /** The JWT claim (a string array, or a comma-separated string) whose labels are turned on; undefined: none is read. */
  claim?: string | undefined;
}

interface RequestContext {
  request?: Request;
  viewer?: Viewer;
}

const labelList = (value: unknown): string[] =>
  (Array.isArray(value) ? value.filter((label): label is string => typeof label === 'string') : typeof value === 'string' ? value.split(',') : [])
    .map((label) => label.trim())
    .filter(Boolean);

/**
 * The custom labels each request names, by the settings: read once per request (its context), empty when neither
 * setting is given.
 */
export function requestOverrideLabels(settings: OverrideLabelSettings): (context: unknown) => ReadonlySet<string> {
  const { header, claim } = settings;
  const labelsOf = new WeakMap<object, ReadonlySet<string>>();
  const none: ReadonlySet<string> = new Set();
  return (context) => {
    if ((!header && !claim) || typeof context !== 'object' || context === null) return none;
    let labels = labelsOf.get(context);
    if (!labels) {
      const caller = context as RequestContext;
      labels = new Set([
        ...(header ? labelList(caller.request?.headers.get(header)) : []),
        ...(claim ? labelList(verifiedClaims(caller)?.[claim]) : []),
      ]);
      labelsOf.set(context, labels);
    }
    return labels;
  };
}

/**
 * The planner's handler with the custom labels each execution turns on, read from the execution's own context.
 * router-runtime asks `handleProgressiveOverride` once per custom label of the supergraph for each execution, before
 * its plan is looked up (its plan cache keys on the labels turned on), and does not await it. Hive Gateway's
 * `progressiveOverride` option would reach it through fusion-runtime, which answers from the labels it read for the
 * request's original context object: a shared subscription executes with a context of its own (sharing.ts), for
 * which that answered no label at all. `percent(n)` labels are not decided here: the planner decides them from the
 * request's random value.
 */
export function withOverrideLabels(handler: UnifiedGraphHandler, settings: OverrideLabelSettings): UnifiedGraphHandler {
  if (!settings.header && !settings.claim) return handler;
  const labelsOf = requestOverrideLabels(settings);
  const handleProgressiveOverride = (label: string, context: unknown) => labelsOf(context).has(label);
  return (options) => handler({ ...options, handleProgressiveOverride });
}

/**
 * Whether a request names labels in the configured header. Its answer may come from the overriding side, which the
 * shared response cache, keyed on the document and variables alone, would then serve to callers who named none.
 */
export const namesOverrideLabels = (request: Request, header: string | undefined): boolean => !!header && labelList(request.headers.get(header)).length > 0;

/** Labelled @override in a supergraph: `@join__field(..., overrideLabel: "...")`. */
const LABELLED_OVERRIDE = /@join__field\([^)]*\boverrideLabel:\s*"/;

/** Whether a supergraph has an @override with a label, which only the Rust planner serves. */
export const hasLabelledOverride = (supergraphSdl: string): boolean => LABELLED_OVERRIDE.test(supergraphSdl);

export class ProgressiveOverrideUnsupportedError extends Error {
  override readonly name = 'ProgressiveOverrideUnsupportedError';
}

/**
 * The JavaScript planner (QUERY_PLANNER=js) rolls a `percent(n)` label's dice for each field it resolves, not once per
 * request: the fields of one request land on both sides, and a key or @requires field one side plans for is fetched
 * from the other, which fails the request. It is refused a supergraph with labelled overrides, at start, or on a
 * reload (the previous supergraph stays served).
 */
export function withPlannableOverrides<S extends string | (() => string | Promise<string>)>(source: S, onJsPlanner: boolean): S {
  if (!onJsPlanner) return source;
  const refuse = (sdl: string): string => {
    if (hasLabelledOverride(sdl)) {
      throw new ProgressiveOverrideUnsupportedError(
        'The supergraph has @override with a label (progressive override), which QUERY_PLANNER=js does not serve consistently: use QUERY_PLANNER=rust',
      );
    }
    return sdl;
  };
  if (typeof source === 'string') return refuse(source) as S;
  return (() => {
    const sdl = source();
    return typeof sdl === 'string' ? refuse(sdl) : sdl.then(refuse);
  }) as S;
}
