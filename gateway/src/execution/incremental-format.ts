// The two incremental delivery formats the gateway writes, chosen by the request's Accept header. The executor yields
// the format of 2022-08-24; this module rewrites it into the current one when that is asked for.
import {
  getNamedType,
  isAbstractType,
  isCompositeType,
  isListType,
  isNonNullType,
  isObjectType,
  Kind,
  type DirectiveNode,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLError,
  type GraphQLFormattedError,
  type GraphQLObjectType,
  type GraphQLSchema,
  type SelectionNode,
  type ValueNode,
} from 'graphql';

/**
 * `20220824`: graphql-js 17.0.0-alpha.2's format, `multipart/mixed;deferSpec=20220824`, which Apollo Router speaks and
 * Apollo Client 4 reads with its Defer20220824Handler: each later part carries `incremental` entries with their `path`.
 *
 * `v0.2`: graphql-js 17's current format (17.0.0-alpha.9 onwards), `multipart/mixed;incrementalSpec=v0.2`, which Apollo
 * Server 5.1 and Cosmo serve and Apollo Client 4.1 reads with its GraphQL17Alpha9Handler: the parts announce what is
 * `pending` (an id, a path, a label), deliver `incremental` entries by id, and say when each is `completed`.
 */
export type IncrementalFormat = '20220824' | 'v0.2';

export const INCREMENTAL_MEDIA_TYPES: Readonly<Record<IncrementalFormat, string>> = {
  '20220824': 'multipart/mixed;deferSpec=20220824',
  'v0.2': 'multipart/mixed;incrementalSpec=v0.2',
};

/** The format one Accept range asks for, if any we write: multipart/mixed naming either spec or none, or an event stream. */
function formatOf(range: string): IncrementalFormat | undefined {
  const [type, ...parameters] = range.split(';').map((part) => part.trim().toLowerCase());
  if (type === 'text/event-stream') return '20220824';
  if (type !== 'multipart/mixed') return undefined;
  const specs = parameters.filter((parameter) => /^[a-z]*spec=/.test(parameter)).map((spec) => spec.replace(/"/g, ''));
  if (specs.length === 0 || specs.includes('deferspec=20220824')) return '20220824';
  if (specs.includes('incrementalspec=v0.2')) return 'v0.2';
  return undefined;
}

const quality = (range: string): number => {
  const q = /;\s*q=([0-9.]+)/i.exec(range)?.[1];
  return q === undefined ? 1 : Number(q);
};

/**
 * The incremental format an Accept header takes, the most preferred first (by `q`, then by order): undefined when it
 * takes neither, and the answer cannot come in parts. A plain `multipart/mixed` gets 2022-08-24's, as it always has.
 */
export function acceptedIncrementalFormat(accept: string | null): IncrementalFormat | undefined {
  const ranges = (accept ?? '')
    .split(',')
    .map((range, index) => ({ range, index, q: quality(range) }))
    .filter(({ q }) => q > 0)
    .sort((a, b) => b.q - a.q || a.index - b.index);
  for (const { range } of ranges) {
    const format = formatOf(range);
    if (format) return format;
  }
  return undefined;
}

type Path = readonly (string | number)[];
type Errors = readonly (GraphQLError | GraphQLFormattedError)[];
type Extensions = Record<string, unknown>;

/** A part of the 2022-08-24 format, as the executor yields it. */
export interface LegacyPart {
  data?: Record<string, unknown> | null;
  errors?: Errors;
  extensions?: Extensions;
  incremental?: readonly {
    data?: Record<string, unknown> | null;
    items?: readonly unknown[] | null;
    path: Path;
    label?: string;
    errors?: Errors;
    extensions?: Extensions;
  }[];
  hasNext?: boolean;
}

interface Pending {
  id: string;
  path: Path;
  label?: string;
}

/** A part of the current (v0.2) format. */
export interface CurrentPart {
  data?: Record<string, unknown> | null;
  errors?: Errors;
  extensions?: Extensions;
  pending?: Pending[];
  incremental?: ({ id: string; data: Record<string, unknown>; errors?: Errors; extensions?: Extensions } | { id: string; items: readonly unknown[]; errors?: Errors; extensions?: Extensions })[];
  completed?: { id: string; errors?: Errors }[];
  hasNext: boolean;
}

/** What executed the operation: the selections to follow through its result to find where parts are pending. */
export interface IncrementalOperation {
  schema: GraphQLSchema;
  document: DocumentNode;
  operationName?: string | null | undefined;
  variables?: Readonly<Record<string, unknown>> | null | undefined;
}

/** A deferred fragment or a streamed list announced as pending, with what its data will be the result of. */
interface Announced extends Pending {
  kind: 'defer' | 'stream';
  /** The selections its data answers, and on which type: unknown for one announced only when its data came. */
  selections?: { nodes: readonly SelectionNode[]; type: GraphQLCompositeType };
}

const pathKey = (kind: 'defer' | 'stream', path: Path, label: string | undefined): string => `${kind}\u0000${path.join('\u0000')}\u0000${label ?? ''}`;

function argument(directive: DirectiveNode, name: string, variables: Readonly<Record<string, unknown>>): unknown {
  const value: ValueNode | undefined = directive.arguments?.find((node) => node.name.value === name)?.value;
  if (!value) return undefined;
  switch (value.kind) {
    case Kind.VARIABLE:
      return variables[value.name.value];
    case Kind.BOOLEAN:
      return value.value;
    case Kind.INT:
      return Number(value.value);
    case Kind.STRING:
      return value.value;
    default:
      return undefined;
  }
}

/**
 * Rewrites the 2022-08-24 parts of one operation into the current format. Each deferred fragment and streamed list is
 * announced `pending` in the part that delivers the object or list it belongs to, found by following the operation's
 * selections through the data (so a client knows from the first part what is still to come); one whose place cannot
 * be told from the data (a fragment on an abstract type whose object has no __typename) is announced in the part that
 * delivers it. A deferred fragment is `completed` with its data, a stream when the executor reports its end or with the
 * last part, as the 2022-08-24 format has no end of stream of its own.
 */
export async function* toCurrentFormat(parts: AsyncIterable<LegacyPart>, operation: IncrementalOperation): AsyncGenerator<CurrentPart> {
  const { schema, document } = operation;
  const variables = operation.variables ?? {};
  const fragments = new Map<string, FragmentDefinitionNode>();
  let definition: { selections: readonly SelectionNode[]; type: GraphQLObjectType } | undefined;
  for (const node of document.definitions) {
    if (node.kind === Kind.FRAGMENT_DEFINITION) fragments.set(node.name.value, node);
    else if (node.kind === Kind.OPERATION_DEFINITION && !definition && (!operation.operationName || node.name?.value === operation.operationName)) {
      const type = schema.getRootType(node.operation);
      if (type) definition = { selections: node.selectionSet.selections, type };
    }
  }

  let nextId = 0;
  const waiting = new Map<string, Announced[]>();
  const open = new Map<string, Announced>();

  const announce = (kind: Announced['kind'], path: Path, label: string | undefined, selections: Announced['selections'], into: Pending[]): Announced => {
    const record: Announced = { kind, id: String(nextId++), path, ...(label === undefined ? {} : { label }), ...(selections ? { selections } : {}) };
    const key = pathKey(kind, path, label);
    waiting.set(key, [...(waiting.get(key) ?? []), record]);
    open.set(record.id, record);
    into.push({ id: record.id, path, ...(label === undefined ? {} : { label }) });
    return record;
  };
  /** The announced record a delivery answers, or one announced now. */
  const recordFor = (kind: Announced['kind'], path: Path, label: string | undefined, into: Pending[]): Announced => {
    const key = pathKey(kind, path, label);
    const queue = waiting.get(key);
    const record = kind === 'defer' ? queue?.shift() : queue?.[0];
    if (queue?.length === 0) waiting.delete(key);
    return record ?? announce(kind, path, label, undefined, into);
  };

  const included = (node: SelectionNode): boolean => {
    for (const directive of node.directives ?? []) {
      const condition = argument(directive, 'if', variables);
      if (directive.name.value === 'skip' && condition === true) return false;
      if (directive.name.value === 'include' && condition === false) return false;
    }
    return true;
  };
  /** The @defer or @stream a selection carries, when it applies (its `if` absent or not false). */
  const incremental = (node: SelectionNode, name: 'defer' | 'stream'): DirectiveNode | undefined => {
    const directive = node.directives?.find((candidate) => candidate.name.value === name);
    return directive && argument(directive, 'if', variables) !== false ? directive : undefined;
  };
  /** Whether a fragment on `condition` applies to this object: undefined when the data cannot tell. */
  const applies = (condition: string | undefined, declared: GraphQLCompositeType, runtime: GraphQLObjectType | undefined): boolean | undefined => {
    if (!condition || condition === declared.name) return true;
    const type = schema.getType(condition);
    if (!type || !isCompositeType(type)) return false;
    if (!runtime) return undefined;
    return type === runtime || (isAbstractType(type) && schema.isSubType(type, runtime));
  };

  /** Finds what is pending within `value`, the result of `selections` on `type` at `path`. */
  const walk = (selections: readonly SelectionNode[], type: GraphQLCompositeType, value: unknown, path: Path, into: Pending[]): void => {
    if (value === null || typeof value !== 'object') return;
    if (Array.isArray(value)) {
      value.forEach((item, index) => walk(selections, type, item, [...path, index], into));
      return;
    }
    const object = value as Record<string, unknown>;
    const typename = object['__typename'];
    const runtime = isObjectType(type) ? type : typeof typename === 'string' ? (schema.getType(typename) as GraphQLObjectType | undefined) : undefined;
    for (const node of selections) {
      if (!included(node)) continue;
      if (node.kind === Kind.FIELD) {
        const key = node.alias?.value ?? node.name.value;
        const owner = runtime ?? type;
        const field = 'getFields' in owner ? owner.getFields()[node.name.value] : undefined;
        if (!field || !(key in object)) continue;
        const fieldPath = [...path, key];
        const fieldValue = object[key];
        const stream = incremental(node, 'stream');
        const unwrapped = isNonNullType(field.type) ? field.type.ofType : field.type;
        if (stream && isListType(unwrapped) && Array.isArray(fieldValue)) {
          const initialCount = Number(argument(stream, 'initialCount', variables) ?? 0);
          // A list shorter than its initial count is whole already: nothing of it is streamed.
          if (fieldValue.length >= initialCount) {
            const itemType = getNamedType(field.type);
            const label = argument(stream, 'label', variables);
            announce('stream', fieldPath, typeof label === 'string' ? label : undefined, isCompositeType(itemType) && node.selectionSet ? { nodes: node.selectionSet.selections, type: itemType } : undefined, into);
          }
        }
        const named = getNamedType(field.type);
        if (node.selectionSet && isCompositeType(named)) walk(node.selectionSet.selections, named, fieldValue, fieldPath, into);
        continue;
      }
      const fragment = node.kind === Kind.INLINE_FRAGMENT ? node : fragments.get(node.name.value);
      if (!fragment) continue;
      const condition = fragment.typeCondition?.name.value;
      if (applies(condition, type, runtime) !== true) continue;
      const narrowed = condition ? (schema.getType(condition) as GraphQLCompositeType) : type;
      const defer = incremental(node, 'defer');
      if (defer) {
        const label = argument(defer, 'label', variables);
        announce('defer', path, typeof label === 'string' ? label : undefined, { nodes: fragment.selectionSet.selections, type: narrowed }, into);
      } else walk(fragment.selectionSet.selections, narrowed, object, path, into);
    }
  };

  let first = true;
  for await (const part of parts) {
    const pending: Pending[] = [];
    const delivered: NonNullable<CurrentPart['incremental']> = [];
    const completed: NonNullable<CurrentPart['completed']> = [];
    const initial = first;
    first = false;
    if (initial && definition && part.data) walk(definition.selections, definition.type, part.data, [], pending);
    for (const entry of part.incremental ?? []) {
      const extensions = entry.extensions ? { extensions: entry.extensions } : {};
      if ('items' in entry) {
        const index = entry.path.at(-1);
        const listPath = entry.path.slice(0, -1);
        const record = recordFor('stream', listPath, entry.label, pending);
        if (!entry.items) {
          completed.push({ id: record.id, ...(entry.errors ? { errors: entry.errors } : {}) });
          closeStream(record);
          continue;
        }
        delivered.push({ id: record.id, items: entry.items, ...(entry.errors ? { errors: entry.errors } : {}), ...extensions });
        const selections = record.selections;
        if (selections && typeof index === 'number') entry.items.forEach((item, offset) => walk(selections.nodes, selections.type, item, [...listPath, index + offset], pending));
        continue;
      }
      const record = recordFor('defer', entry.path, entry.label, pending);
      open.delete(record.id);
      if (entry.data === null || entry.data === undefined) {
        completed.push({ id: record.id, ...(entry.errors ? { errors: entry.errors } : {}) });
        continue;
      }
      delivered.push({ id: record.id, data: entry.data, ...(entry.errors ? { errors: entry.errors } : {}), ...extensions });
      completed.push({ id: record.id });
      if (record.selections) walk(record.selections.nodes, record.selections.type, entry.data, entry.path, pending);
    }
    const hasNext = part.hasNext ?? false;
    // The 2022-08-24 format ends a stream only with the operation: what is still open completes with the last part.
    if (!hasNext) {
      for (const record of open.values()) completed.push({ id: record.id });
      open.clear();
    }
    yield {
      ...(initial && 'data' in part ? { data: part.data ?? null } : {}),
      ...(part.errors ? { errors: part.errors } : {}),
      ...(pending.length > 0 ? { pending } : {}),
      ...(delivered.length > 0 ? { incremental: delivered } : {}),
      ...(completed.length > 0 ? { completed } : {}),
      ...(part.extensions ? { extensions: part.extensions } : {}),
      hasNext,
    };
  }

  function closeStream(record: Announced): void {
    open.delete(record.id);
    const key = pathKey('stream', record.path, record.label);
    waiting.delete(key);
  }
}
