// Federation's @authenticated and @requiresScopes enforced at the gateway, before any subgraph is called; subgraphs
// keep their own checks (ownership, which only they can decide).
import { useGenericAuth, type ValidateUserFnParams } from '@envelop/generic-auth';
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';
import { forbidden, scopesOf, unauthenticated, type Identity, type Viewer } from '@ordergraph/core';
import {
  GraphQLError,
  Kind,
  getOperationAST,
  parse,
  visit,
  BREAK,
  type ASTNode,
  type DocumentNode,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql';
import { isAsyncIterable } from '@graphql-tools/utils';

/** The original document of each operation whose fields were refused, and which operations had a refusal. */
interface Refusals {
  original: WeakMap<object, DocumentNode>;
  refused: WeakSet<object>;
}

/**
 * What a field asks of its caller, from `@authenticated` and `@requiresScopes` on the field and on its parent type: a
 * signed-in caller, and, when there are scope sets, every scope of one of them (the type's and the field's sets
 * together, any one of them sufficing).
 */
export interface FieldRequirement {
  authenticated: boolean;
  scopes: readonly (readonly string[])[];
}

/** Why `viewer` may not read a field with this requirement (UNAUTHENTICATED or FORBIDDEN), or undefined when it may. */
export function refusalFor(viewer: Viewer, requirement: FieldRequirement): GraphQLError | undefined {
  if (!requirement.authenticated && requirement.scopes.length === 0) return undefined;
  if (viewer === null) return unauthenticated();
  const held = scopesOf(viewer);
  if (requirement.scopes.length > 0 && !requirement.scopes.some((all) => all.every((scope) => held.includes(scope)))) return forbidden();
  return undefined;
}

/** The error at a refused field: path as the library gives it, with `@` standing for every item of a list. */
function refusalOf(params: ValidateUserFnParams<Identity>, refusals: Refusals): GraphQLError | undefined {
  const error = refusalFor(params.user ?? null, {
    authenticated: params.fieldAuthArgs !== undefined || params.typeAuthArgs !== undefined,
    scopes: [...(params.typeScopes ?? []), ...(params.fieldScopes ?? [])] as string[][],
  });
  if (!error) return undefined;
  refusals.refused.add(params.executionArgs.contextValue as object);
  return new GraphQLError(error.message, { nodes: [params.fieldNode], path: params.path, extensions: error.extensions });
}

/** `{ __typename }` under the operation's own name, which metrics and logs label it by. */
const typenameOnly = (operation: OperationDefinitionNode) => parse(`${operation.operation} ${operation.name?.value ?? ''} { __typename }`);

const isEmpty = (document: DocumentNode, operationName: string | null | undefined) =>
  (getOperationAST(document, operationName)?.selectionSet.selections.length ?? 0) === 0;

/** A part of an incremental result (deferSpec=20220824): the first with `data`, the later ones with `incremental`. */
interface IncrementalPart {
  data?: Record<string, unknown> | null;
  errors?: readonly GraphQLError[];
  incremental?: { data?: Record<string, unknown> | null; path: readonly (string | number)[]; errors?: readonly GraphQLError[] }[];
  hasNext: boolean;
}

/**
 * Sets the refused field null in `data` (found at `base` of the whole result) where its parent is there; `@` in the
 * refusal's path is every item of a list. False when `data` does not hold its parent.
 */
function nullRefused(data: unknown, base: readonly (string | number)[], path: readonly (string | number)[]): boolean {
  if (path.length <= base.length || !base.every((key, i) => key === path[i] || (path[i] === '@' && typeof key === 'number'))) return false;
  let parents: unknown[] = [data];
  for (const key of path.slice(base.length, -1)) {
    parents = parents.flatMap((parent) => {
      if (parent === null || typeof parent !== 'object') return [];
      if (Array.isArray(parent)) return key === '@' ? parent : typeof key === 'number' ? [parent[key]] : [];
      return [(parent as Record<string, unknown>)[key as string]];
    });
  }
  const objects = parents.filter((parent): parent is Record<string, unknown> => parent !== null && typeof parent === 'object' && !Array.isArray(parent));
  for (const parent of objects) parent[path.at(-1) as string] = null;
  return objects.length > 0;
}

const defers = (node: { directives?: readonly { name: { value: string } }[] | undefined }) => node.directives?.some((directive) => directive.name.value === 'defer') ?? false;

/** The fields of a document that lie in a deferred fragment: an inline one, or a named one spread with @defer. */
function deferredFields(document: DocumentNode): Set<ASTNode> {
  const deferredFragments = new Set<string>();
  visit(document, {
    FragmentSpread(node) {
      if (defers(node)) deferredFragments.add(node.name.value);
    },
  });
  const fields = new Set<ASTNode>();
  const deferring = (node: ASTNode | readonly ASTNode[]) =>
    'kind' in node &&
    ((node.kind === Kind.INLINE_FRAGMENT && defers(node)) || (node.kind === Kind.FRAGMENT_DEFINITION && deferredFragments.has(node.name.value)));
  visit(document, {
    Field(node, _key, _parent, _path, ancestors) {
      if (ancestors.some(deferring)) fields.add(node);
    },
  });
  return fields;
}

/**
 * Each refusal in the first part that holds the refused field's parent (the field null there, the error beside it),
 * as graphql-js reports an error with the part its field is delivered in (a field of a deferred fragment never with the
 * first part); one whose parent never comes is reported with the last part. Written here: the library leaves incremental results out ("doesn't work with async iterables").
 * A refused non-null field nulls only itself here, not its parent as a single result's completion does.
 */
async function* refusalsInParts(parts: AsyncIterable<IncrementalPart>, refused: readonly GraphQLError[], document: DocumentNode): AsyncGenerator<IncrementalPart> {
  let pending = [...refused];
  const deferred = deferredFields(document);
  for await (const part of parts) {
    const place = (data: unknown, base: readonly (string | number)[], first = false) => {
      const placed = pending.filter((error) => error.path && !(first && error.nodes?.some((node) => deferred.has(node))) && nullRefused(data, base, error.path));
      pending = pending.filter((error) => !placed.includes(error));
      return placed;
    };
    let next: IncrementalPart = part;
    if (part.incremental) {
      const incremental = part.incremental.map((entry) => {
        const placed = place(entry.data, entry.path);
        return placed.length > 0 ? { ...entry, errors: [...(entry.errors ?? []), ...placed] } : entry;
      });
      next = { ...part, incremental };
    } else if ('data' in part) {
      const placed = place(part.data, [], true);
      if (placed.length > 0) next = { ...part, errors: [...(part.errors ?? []), ...placed] };
    }
    if (!next.hasNext && pending.length > 0) {
      const last = next.incremental?.at(-1);
      next = last
        ? { ...next, incremental: [...next.incremental!.slice(0, -1), { ...last, errors: [...(last.errors ?? []), ...pending] }] }
        : { ...next, errors: [...(next.errors ?? []), ...pending] };
      pending = [];
    }
    yield next;
  }
}

/** Whether a document uses @skip or @include, whose variables decide which of its fields the library checks. */
function hasConditionalFields(document: DocumentNode): boolean {
  let conditional = false;
  visit(document, {
    Directive(node) {
      if (node.name.value !== 'skip' && node.name.value !== 'include') return undefined;
      conditional = true;
      return BREAK;
    },
  });
  return conditional;
}

/** Scope sets a document is remembered as allowed for, at most: there are as many as roles, and a few more. */
const SCOPE_SETS_PER_DOCUMENT = 16;

/**
 * The documents in which the library refused nothing, per schema and per scope set of the caller (`-` for anonymous).
 * Its decision depends on nothing else once @skip and @include are out of play, so a document a caller of the same
 * scopes passed is not visited again: the visit (the whole document with type information) was the largest cost the
 * gateway added per request. Held weakly by the schema and by the document, which Yoga's parse cache shares per text.
 */
class AllowedDocuments {
  private readonly bySchema = new WeakMap<GraphQLSchema, WeakMap<DocumentNode, Set<string>>>();
  private readonly conditional = new WeakMap<DocumentNode, boolean>();

  private static scopeSet(viewer: Viewer): string {
    return viewer === null ? '-' : scopesOf(viewer).join(' ');
  }

  private cacheable(document: DocumentNode): boolean {
    let conditional = this.conditional.get(document);
    if (conditional === undefined) this.conditional.set(document, (conditional = hasConditionalFields(document)));
    return !conditional;
  }

  has(schema: GraphQLSchema, document: DocumentNode, viewer: Viewer): boolean {
    return this.bySchema.get(schema)?.get(document)?.has(AllowedDocuments.scopeSet(viewer)) ?? false;
  }

  add(schema: GraphQLSchema, document: DocumentNode, viewer: Viewer): void {
    if (!this.cacheable(document)) return;
    let documents = this.bySchema.get(schema);
    if (!documents) this.bySchema.set(schema, (documents = new WeakMap()));
    let scopeSets = documents.get(document);
    if (!scopeSets) documents.set(document, (scopeSets = new Set()));
    if (scopeSets.size < SCOPE_SETS_PER_DOCUMENT) scopeSets.add(AllowedDocuments.scopeSet(viewer));
  }
}

type OperationHook = (payload: { args: { contextValue: unknown; document: DocumentNode; schema: GraphQLSchema } }) => unknown;

/**
 * The library's plugin, its document visit skipped where `allowed` knows the answer. The visit runs in the plugin the
 * library adds (@envelop/extended-validation's onExecute and onSubscribe), which is wrapped here as it is added.
 */
function genericAuthWithDecisions(plugin: GatewayPlugin, skip: (args: { contextValue: unknown; document: DocumentNode; schema: GraphQLSchema }) => boolean): GatewayPlugin {
  const unlessKnown = (hook: OperationHook | undefined): OperationHook | undefined =>
    hook && ((payload) => (skip(payload.args) ? undefined : hook(payload)));
  const { onPluginInit } = plugin as { onPluginInit?: (payload: { addPlugin(plugin: GatewayPlugin): void }) => void };
  if (!onPluginInit) throw new Error('@envelop/generic-auth no longer adds its validation plugin: authorization decisions cannot be cached');
  return {
    ...plugin,
    onPluginInit(payload: { addPlugin(plugin: GatewayPlugin): void }) {
      onPluginInit({
        ...payload,
        addPlugin: (added: GatewayPlugin) => {
          const hooks = added as { onExecute?: OperationHook; onSubscribe?: OperationHook };
          payload.addPlugin({ ...added, onExecute: unlessKnown(hooks.onExecute), onSubscribe: unlessKnown(hooks.onSubscribe) } as GatewayPlugin);
        },
      });
    },
  } as GatewayPlugin;
}

export interface AuthorizationDirectives {
  plugins: GatewayPlugin[];
  /** The operation as the client sent it: a result is completed against it, refused fields included. */
  documentAsSent(context: unknown, executed: DocumentNode): DocumentNode;
}

// The fields a caller may not see are taken out of the operation (@envelop/generic-auth) and come back null with an
// error while the rest of the answer stays.
/**
 * The library's plugin between two of ours. Before it: the document as parsed is kept. After it: an operation nothing
 * was refused in gets that very document back (the library rebuilds it in every case, and the Rust planner caches
 * plans per document object, so the rebuilt copy would be planned again on every request); an operation every field
 * was refused in asks no subgraph (there is nothing left to plan).
 */
export function authorizationDirectives(): AuthorizationDirectives {
  const refusals: Refusals = { original: new WeakMap(), refused: new WeakSet() };
  const allowed = new AllowedDocuments();
  const viewerIn = (context: unknown) => (context as { viewer?: Viewer }).viewer ?? null;
  const keep = ({ args }: { args: { contextValue: unknown; document: DocumentNode } }) => {
    refusals.original.set(args.contextValue as object, args.document);
  };
  const restore = ({ args, setResultAndStopExecution }: {
    args: { contextValue: unknown; document: DocumentNode; schema: GraphQLSchema; operationName?: string | null | undefined };
    setResultAndStopExecution(result: { data: Record<string, never> }): void;
  }) => {
    const context = args.contextValue as object;
    const original = refusals.original.get(context);
    if (!refusals.refused.has(context)) {
      if (original) allowed.add(args.schema, original, viewerIn(context));
      // Queries and mutations only: a subscription is planned once for its whole life, and the runtime's upstream
      // subscription did not start on the restored document in the legacy-protocol test (cause not traced further).
      if (original && getOperationAST(original, args.operationName)?.operation !== 'subscription') args.document = original;
      return;
    }
    if (!isEmpty(args.document, args.operationName)) return;
    // Every field was refused: nothing is left to plan. A query or mutation runs `{ __typename }` instead, which both
    // planners answer without a subgraph, so the library's errors and the result's completion apply as to any
    // other; a subscription is answered at once. The library adds its errors, and nulls the refused fields, to both.
    const operation = getOperationAST(args.document, args.operationName)!;
    if (operation.operation === 'subscription') setResultAndStopExecution({ data: {} });
    else args.document = typenameOnly(operation);
  };
  // The library answers an operation with a refusal `{ data: null, errors }` when its result comes in parts (@defer):
  // the parts are kept as they left execution, and the refusals go into them instead (refusalsInParts).
  const inParts = new WeakMap<object, AsyncIterable<IncrementalPart>>();
  return {
    plugins: [
      {
        onExecute: (payload) => {
          keep(payload);
          return {
            onExecuteDone: ({ result }) => {
              if (isAsyncIterable(result)) inParts.set(payload.args.contextValue as object, result as AsyncIterable<IncrementalPart>);
            },
          };
        },
        onSubscribe: keep,
      },
      genericAuthWithDecisions(
        useGenericAuth<Identity, Record<string, unknown>, 'viewer'>({
          mode: 'protect-granular',
          contextFieldName: 'viewer',
          // The viewer is verified by useAuthentication (auth.ts) before this runs.
          resolveUserFn: viewerIn,
          extractScopes: (viewer) => scopesOf(viewer),
          validateUser: (params) => refusalOf(params, refusals),
          rejectUnauthenticated: false,
        }) as GatewayPlugin,
        (args) => allowed.has(args.schema, args.document, viewerIn(args.contextValue)),
      ),
      {
        onExecute: (payload) => {
          restore(payload);
          const context = payload.args.contextValue as object;
          return {
            onExecuteDone: ({ result, setResult }) => {
              const parts = inParts.get(context);
              if (!parts || isAsyncIterable(result) || !refusals.refused.has(context)) return;
              const sent = refusals.original.get(context) ?? payload.args.document;
              setResult(refusalsInParts(parts, (result.errors ?? []) as readonly GraphQLError[], sent));
            },
          };
        },
        onSubscribe: restore,
      },
    ],
    documentAsSent: (context, executed) => refusals.original.get(context as object) ?? executed,
  };
}
