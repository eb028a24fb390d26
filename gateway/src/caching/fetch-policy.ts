// What the entity cache may keep of one subgraph fetch, and for whom: worked out once per fetch document from the
// supergraph's @cacheControl hints (cache-control.ts reads them), its authorization directives and the settings.
import {
  Kind,
  parse,
  getNamedType,
  isAbstractType,
  isCompositeType,
  isListType,
  isNonNullType,
  isObjectType,
  isUnionType,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLNamedType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValueNode,
} from 'graphql';
import { cacheControlOf, type CacheHints } from './cache-control.js';
import { possibleObjectTypes } from './generations.js';

/** Directives that make a subgraph answer by who asks (the gateway enforces them, the subgraph checks them again). */
const AUTHORIZATION_DIRECTIVES = new Set(['authenticated', 'requiresScopes', 'policy']);

export interface FetchPolicy {
  /** Seconds an answer may be kept; 0: never. */
  maxAge: number;
  /** Shared by every caller: PUBLIC hints only, no authorization directive, and a subgraph that answers all alike. */
  shared: boolean;
  /**
   * The object types the answer holds below its root (an entity fetch's own type apart, and objects selected for
   * their key fields alone: a write to one cannot change its key), a write to which may change the answer.
   */
  types: string[];
}

/**
 * A root field that names the entity it returns by its key (`order(id: $id): Order`, Cosmo's implicit mapping): its
 * answer is that entity's, dropped by a write to it like an entity fetch's, not by a write to any other of its type.
 */
export interface RootEntity {
  type: string;
  /** The `id` argument: a variable's name, or the literal value. */
  id: { variable: string } | { value: string };
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
  /** `values`: a root field it selects answers no object (a scalar, an enum: VALUES_GENERATION in generations.ts). */
  | { kind: 'root'; policy: FetchPolicy; entity?: RootEntity; values: boolean }
  | { kind: 'uncached' };

interface Walked {
  maxAge: number;
  private: boolean;
  restricted: boolean;
  /** A field the schema does not know (an internal one): nothing is kept. */
  unknown: boolean;
  types: Set<string>;
}

/** The supergraph's key fields of each entity type (`@join__type(key:)`, top-level fields only), for every subgraph. */
export type EntityKeys = ReadonlyMap<string, ReadonlySet<string>>;

export function entityKeys(schema: GraphQLSchema): EntityKeys {
  const keys = new Map<string, Set<string>>();
  for (const type of Object.values(schema.getTypeMap())) {
    for (const directive of type.astNode?.directives ?? []) {
      if (directive.name.value !== 'join__type') continue;
      const key = directive.arguments?.find((argument) => argument.name.value === 'key')?.value;
      if (key?.kind !== Kind.STRING) continue;
      // A key is a selection set without its braces: graphql's own parser reads it, nested fields and comments too. One
      // that does not parse names no field, and nothing of the type is taken for a reference.
      let selected: OperationDefinitionNode | undefined;
      try {
        selected = parse(`{ ${key.value} }`).definitions[0] as OperationDefinitionNode;
      } catch {
        continue;
      }
      const fields = keys.get(type.name) ?? new Set<string>();
      for (const field of selected.selectionSet.selections) if (field.kind === Kind.FIELD) fields.add(field.name.value);
      keys.set(type.name, fields);
    }
  }
  return keys;
}

/**
 * The object types each subgraph defines or extends (`@join__type(graph:)`), by its `join__Graph` value: what a write
 * of that subgraph may have changed when it says nothing of it. (The schema served keeps `@join__type` on each type
 * but not the `join__Graph` enum that names the subgraphs: graphValue gives a subgraph's value.)
 */
export function subgraphTypes(schema: GraphQLSchema): ReadonlyMap<string, ReadonlySet<string>> {
  const types = new Map<string, Set<string>>();
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type === schema.getQueryType() || type === schema.getMutationType() || type === schema.getSubscriptionType()) continue;
    for (const directive of type.astNode?.directives ?? []) {
      if (directive.name.value !== 'join__type') continue;
      const graph = directive.arguments?.find((argument) => argument.name.value === 'graph')?.value;
      if (graph?.kind === Kind.ENUM) types.set(graph.value, (types.get(graph.value) ?? new Set()).add(type.name));
    }
  }
  return types;
}

/**
 * A subgraph's `join__Graph` value as composition names it: capitals, every other character than a letter, a digit or
 * `_` as `_`, and `_` before a leading digit. (Two names that collide are numbered by composition: such a subgraph is
 * not found, and its callers take every subgraph's types.)
 */
export const graphValue = (subgraph: string): string => {
  const sanitized = subgraph.replace(/[^_a-zA-Z0-9]/g, '_').toUpperCase();
  return /^[0-9]/.test(sanitized) ? `_${sanitized}` : sanitized;
};

/** The schema a fetch is read against: its cache hints and its entities' keys, worked out once per supergraph. */
export interface ServedSchema {
  schema: GraphQLSchema;
  hints: CacheHints;
  keys: EntityKeys;
}

/** Whether a selection reads nothing of an object of `type` but its key fields and `__typename` (a reference). */
function keysOnly(served: ServedSchema, fragments: ReadonlyMap<string, FragmentDefinitionNode>, set: SelectionSetNode, type: GraphQLNamedType): boolean {
  const keys = served.keys.get(type.name);
  if (!keys) return false;
  return set.selections.every((selection) => {
    if (selection.kind === Kind.FIELD) return !selection.selectionSet && (selection.name.value === '__typename' || keys.has(selection.name.value));
    const fragment = selection.kind === Kind.INLINE_FRAGMENT ? selection : fragments.get(selection.name.value);
    const condition = fragment?.typeCondition?.name.value;
    return fragment !== undefined && (condition === undefined || condition === type.name) && keysOnly(served, fragments, fragment.selectionSet, type);
  });
}

const restrictedBy = (node: { astNode?: { directives?: readonly { name: { value: string } }[] | undefined } | null | undefined }) =>
  node.astNode?.directives?.some((directive) => AUTHORIZATION_DIRECTIVES.has(directive.name.value)) ?? false;

/** Apollo's rules (cache-control.ts): a field's hint, else its type's when it returns one, else its parent's (`inherited`). */
function walk(
  served: ServedSchema,
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
  set: SelectionSetNode,
  parent: GraphQLCompositeType,
  inherited: number,
  into: Walked,
): void {
  const { schema, hints } = served;
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
        const reference = selection.selectionSet !== undefined && keysOnly(served, fragments, selection.selectionSet, returned);
        for (const type of possibleObjectTypes(schema, returned)) {
          if (!reference) into.types.add(type);
          if (cacheControlOf(schema.getType(type)!).scope === 'PRIVATE') into.private = true;
        }
        if (selection.selectionSet) walk(served, fragments, selection.selectionSet, returned, maxAge, into);
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
    walk(served, fragments, fragment.selectionSet, condition, inherited, into);
  }
}

/**
 * `returned`: for a root-field fetch, the object types its fields return, whose settings apply when `subgraph.Query`
 * has none (`catalog.Product=60` governs `product(id)` as it governs a Product's entity fetch).
 */
function policyOf(walked: Walked, subgraph: string, type: string, settings: PolicySettings, returned: readonly string[] = []): FetchPolicy {
  const returnedOverrides = returned.flatMap((name) => settings.ttls[`${subgraph}.${name}`] ?? []);
  const override = settings.ttls[`${subgraph}.${type}`] ?? (returnedOverrides.length > 0 ? Math.min(...returnedOverrides) : undefined);
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
export function fetchShape(served: ServedSchema, document: DocumentNode, subgraph: string, settings: PolicySettings): FetchShape {
  const { schema } = served;
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
      for (const name of condition ? possibleObjectTypes(schema, condition) : []) {
        if (policies.has(name)) continue;
        const type = schema.getType(name)!;
        const walked = emptyWalk();
        const own = cacheControlOf(type);
        if (own.scope === 'PRIVATE') walked.private = true;
        if (restrictedBy(type)) walked.restricted = true;
        for (const fragment of first.selectionSet.selections) {
          if (fragment.kind !== Kind.INLINE_FRAGMENT || !applies(schema, fragment.typeCondition?.name.value, type)) continue;
          walk(served, fragments, fragment.selectionSet, type as GraphQLCompositeType, own.maxAge ?? 0, walked);
        }
        policies.set(name, policyOf(walked, subgraph, name, settings));
      }
    }
    return { kind: 'entities', policies };
  }
  const walked = emptyWalk();
  walk(served, fragments, operation.selectionSet, root, 0, walked);
  const rootFields = operation.selectionSet.selections.flatMap((selection) => {
    const field = selection.kind === Kind.FIELD ? root.getFields()[selection.name.value] : undefined;
    return field ? [getNamedType(field.type)] : [];
  });
  const policy = policyOf(walked, subgraph, root.name, settings, rootFields.flatMap((type) => possibleObjectTypes(schema, type)));
  const values = rootFields.some((type) => !isCompositeType(type));
  const only = first?.kind === Kind.FIELD && rest.length === 0 ? first : undefined;
  const entity = only && rootEntity(served, root, only);
  if (!entity || !only?.selectionSet) return { kind: 'root', policy, values };
  // What it holds below the entity, as an entity fetch of that type would.
  const below = emptyWalk();
  walk(served, fragments, only.selectionSet, schema.getType(entity.type) as GraphQLCompositeType, 0, below);
  return { kind: 'root', policy: { ...policy, types: [...below.types].sort() }, entity, values };
}

/** The entity a root field names by its `id` key (an `id` argument of the key field's type), if it returns one object. */
function rootEntity(served: ServedSchema, root: GraphQLCompositeType, field: FieldNode): RootEntity | undefined {
  const definition = isUnionType(root) ? undefined : root.getFields()[field.name.value];
  const returned = definition && (isNonNullType(definition.type) ? definition.type.ofType : definition.type);
  if (!returned || isListType(returned) || !isObjectType(returned) || !served.keys.get(returned.name)?.has('id')) return undefined;
  const keyType = returned.getFields()['id']?.type;
  const parameter = definition.args.find((argument) => argument.name === 'id');
  if (!keyType || !parameter || getNamedType(parameter.type) !== getNamedType(keyType)) return undefined;
  const value: ValueNode | undefined = field.arguments?.find((argument) => argument.name.value === 'id')?.value;
  if (value?.kind === Kind.VARIABLE) return { type: returned.name, id: { variable: value.name.value } };
  if (value?.kind === Kind.STRING || value?.kind === Kind.INT) return { type: returned.name, id: { value: value.value } };
  return undefined;
}
