// What the entity cache may keep of one subgraph fetch, and for whom: worked out once per fetch document from the
// supergraph's @cacheControl hints (cache-control.ts reads them), its authorization directives and the settings.
import {
  Kind,
  getNamedType,
  isAbstractType,
  isCompositeType,
  isObjectType,
  isUnionType,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLNamedType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import { cacheControlOf, type CacheHints } from './cache-control.js';

/** Directives that make a subgraph answer by who asks (the gateway enforces them, the subgraph checks them again). */
const AUTHORIZATION_DIRECTIVES = new Set(['authenticated', 'requiresScopes', 'policy']);

export interface FetchPolicy {
  /** Seconds an answer may be kept; 0: never. */
  maxAge: number;
  /** Shared by every caller: PUBLIC hints only, no authorization directive, and a subgraph that answers all alike. */
  shared: boolean;
  /** The object types the answer holds below its root (an entity fetch's own type apart): any write to one drops it. */
  types: string[];
}

export interface PolicySettings {
  /** Seconds by `subgraph.Type` (`subgraph.Query` for root fields), replacing what the hints say; 0: never cached. */
  ttls: Readonly<Record<string, number>>;
  /** No entry lives longer than this (seconds). */
  maxTtlSeconds: number;
  /** Subgraphs known to answer every caller alike where no hint says PRIVATE and no directive restricts a field. */
  sharedSubgraphs: ReadonlySet<string>;
}

export type FetchShape =
  | { kind: 'entities'; policies: ReadonlyMap<string, FetchPolicy> }
  | { kind: 'root'; policy: FetchPolicy }
  | { kind: 'uncached' };

interface Walked {
  maxAge: number;
  private: boolean;
  restricted: boolean;
  /** A field the schema does not know (an internal one): nothing is kept. */
  unknown: boolean;
  types: Set<string>;
}

const restrictedBy = (node: { astNode?: { directives?: readonly { name: { value: string } }[] | undefined } | null | undefined }) =>
  node.astNode?.directives?.some((directive) => AUTHORIZATION_DIRECTIVES.has(directive.name.value)) ?? false;

function objectTypes(schema: GraphQLSchema, type: GraphQLNamedType): string[] {
  if (isObjectType(type)) return [type.name];
  return isAbstractType(type) ? schema.getPossibleTypes(type).map(({ name }) => name) : [];
}

/** Apollo's rules (cache-control.ts): a field's hint, else its type's when it returns one, else its parent's (`inherited`). */
function walk(
  schema: GraphQLSchema,
  hints: CacheHints,
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
  set: SelectionSetNode,
  parent: GraphQLCompositeType,
  inherited: number,
  into: Walked,
): void {
  for (const selection of set.selections) {
    if (selection.kind === Kind.FIELD) {
      const name = selection.name.value;
      if (name === '__typename') continue;
      const field = isUnionType(parent) ? undefined : parent.getFields()[name];
      if (!field) {
        into.unknown = true;
        continue;
      }
      const coordinate = `${parent.name}.${name}`;
      const maxAge = hints.maxAge[coordinate] ?? inherited;
      into.maxAge = Math.min(into.maxAge, maxAge);
      if (hints.scope[coordinate] === 'PRIVATE') into.private = true;
      const returned = getNamedType(field.type);
      if (restrictedBy(field) || restrictedBy(returned) || restrictedBy(parent)) into.restricted = true;
      // A PRIVATE type keeps every field read of it private (cache-control.ts gives its scope only to the fields
      // returning it), and an interface or union that may stand for one is private too.
      if (cacheControlOf(parent).scope === 'PRIVATE') into.private = true;
      if (isCompositeType(returned)) {
        for (const type of objectTypes(schema, returned)) {
          into.types.add(type);
          if (cacheControlOf(schema.getType(type)!).scope === 'PRIVATE') into.private = true;
        }
        if (selection.selectionSet) walk(schema, hints, fragments, selection.selectionSet, returned, maxAge, into);
      }
      continue;
    }
    const fragment = selection.kind === Kind.INLINE_FRAGMENT ? selection : fragments.get(selection.name.value);
    if (!fragment) {
      into.unknown = true;
      continue;
    }
    const condition = fragment.typeCondition ? schema.getType(fragment.typeCondition.name.value) : parent;
    if (!condition || !isCompositeType(condition)) {
      into.unknown = true;
      continue;
    }
    walk(schema, hints, fragments, fragment.selectionSet, condition, inherited, into);
  }
}

function policyOf(walked: Walked, subgraph: string, type: string, settings: PolicySettings): FetchPolicy {
  const override = settings.ttls[`${subgraph}.${type}`];
  const maxAge = walked.unknown ? 0 : Math.min(override ?? walked.maxAge, settings.maxTtlSeconds);
  return {
    maxAge: Number.isFinite(maxAge) ? Math.max(0, maxAge) : 0,
    shared: !walked.private && !walked.restricted && settings.sharedSubgraphs.has(subgraph),
    types: [...walked.types].sort(),
  };
}

const emptyWalk = (): Walked => ({ maxAge: Infinity, private: false, restricted: false, unknown: false, types: new Set() });

/** Whether a fragment's condition applies to an entity of `type`. */
function applies(schema: GraphQLSchema, condition: string | undefined, type: GraphQLNamedType): boolean {
  if (condition === undefined || condition === type.name) return true;
  const named = schema.getType(condition);
  return isAbstractType(named) && isObjectType(type) && schema.isSubType(named, type);
}

/**
 * The shape of a subgraph fetch: `_entities` (one policy per entity type it may ask for, as Apollo computes an
 * entity's hint: the type's own, then each selected field's), a query of root fields, or anything else (mutations,
 * subscriptions, merged or aliased fetches), which the cache leaves alone.
 */
export function fetchShape(schema: GraphQLSchema, hints: CacheHints, document: DocumentNode, subgraph: string, settings: PolicySettings): FetchShape {
  const operations = document.definitions.filter((definition): definition is OperationDefinitionNode => definition.kind === Kind.OPERATION_DEFINITION);
  const operation = operations.length === 1 ? operations[0]! : undefined;
  const root = schema.getQueryType();
  if (!operation || operation.operation !== 'query' || !root) return { kind: 'uncached' };
  const fragments = new Map(
    document.definitions.flatMap((definition) => (definition.kind === Kind.FRAGMENT_DEFINITION ? [[definition.name.value, definition] as const] : [])),
  );
  const [first, ...rest] = operation.selectionSet.selections;
  if (first?.kind === Kind.FIELD && first.name.value === '_entities') {
    const argument = first.arguments?.find((candidate) => candidate.name.value === 'representations');
    if (rest.length > 0 || first.alias || !first.selectionSet || argument?.value.kind !== Kind.VARIABLE || argument.value.name.value !== 'representations') {
      return { kind: 'uncached' };
    }
    const policies = new Map<string, FetchPolicy>();
    for (const selection of first.selectionSet.selections) {
      if (selection.kind !== Kind.INLINE_FRAGMENT || !selection.typeCondition) continue;
      const condition = schema.getType(selection.typeCondition.name.value);
      for (const name of condition ? objectTypes(schema, condition) : []) {
        if (policies.has(name)) continue;
        const type = schema.getType(name)!;
        const walked = emptyWalk();
        const own = cacheControlOf(type);
        if (own.scope === 'PRIVATE') walked.private = true;
        if (restrictedBy(type)) walked.restricted = true;
        for (const fragment of first.selectionSet.selections) {
          if (fragment.kind !== Kind.INLINE_FRAGMENT || !applies(schema, fragment.typeCondition?.name.value, type)) continue;
          walk(schema, hints, fragments, fragment.selectionSet, type as GraphQLCompositeType, own.maxAge ?? 0, walked);
        }
        policies.set(name, policyOf(walked, subgraph, name, settings));
      }
    }
    return { kind: 'entities', policies };
  }
  const walked = emptyWalk();
  walk(schema, hints, fragments, operation.selectionSet, root, 0, walked);
  return { kind: 'root', policy: policyOf(walked, subgraph, root.name, settings) };
}
