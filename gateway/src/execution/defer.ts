// @defer and @stream through the gateway: which planner executes an operation that delivers part of its answer later,
// which clients may ask for it over HTTP, and in which of the two incremental formats its parts are written.
import type { GatewayPlugin, UnifiedGraphHandler } from '@graphql-hive/gateway-runtime';
import { unifiedGraphHandler } from '@graphql-hive/router-runtime';
import { handleFederationSupergraph, type UnifiedGraphHandlerOpts, type UnifiedGraphHandlerResult } from '@graphql-mesh/fusion-runtime';
import { executorFromSchema } from '@graphql-tools/executor';
import { GraphQLDeferDirective, GraphQLStreamDirective, type Executor } from '@graphql-tools/utils';
import { ErrorCode } from '@ordergraph/core';
import { acceptedIncrementalFormat, INCREMENTAL_MEDIA_TYPES, toCurrentFormat, type IncrementalFormat, type IncrementalOperation, type LegacyPart } from './incremental-format.js';
import { hasLabelledOverride } from './progressive-override.js';
import { BREAK, GraphQLError, GraphQLSchema, isInterfaceType, Kind, parse, TypeInfo, visit, visitWithTypeInfo, type ConstDirectiveNode, type DirectiveNode, type DocumentNode, type FragmentSpreadNode, type InlineFragmentNode } from 'graphql';

const INCREMENTAL_DIRECTIVES = new Set(['defer', 'stream']);

const directiveNames = new WeakMap<DocumentNode, ReadonlySet<string>>();

/** The directives a document uses anywhere, whatever their arguments: one visit per document. */
function directivesIn(document: DocumentNode): ReadonlySet<string> {
  let names = directiveNames.get(document);
  if (!names) {
    const found = new Set<string>();
    visit(document, { Directive: (node) => void found.add(node.name.value) });
    directiveNames.set(document, (names = found));
  }
  return names;
}

/** Whether the directive applies: `if` absent, true, or a variable that is not false (the directive's default is true). */
function applies(directive: DirectiveNode, variables: Readonly<Record<string, unknown>> | null | undefined): boolean {
  const condition = directive.arguments?.find((argument) => argument.name.value === 'if')?.value;
  if (!condition) return true;
  if (condition.kind === Kind.BOOLEAN) return condition.value;
  if (condition.kind === Kind.VARIABLE) return variables?.[condition.name.value] !== false;
  return true;
}

/** Whether executing this document delivers part of its result later: an @defer or @stream that applies. */
export function deliversIncrementally(document: DocumentNode, variables?: Readonly<Record<string, unknown>> | null): boolean {
  const names = directivesIn(document);
  // Most documents have neither, and are told apart without another visit.
  if (!names.has('defer') && !names.has('stream')) return false;
  let applied = false;
  visit(document, {
    Directive(node) {
      if (!INCREMENTAL_DIRECTIVES.has(node.name.value) || !applies(node, variables)) return;
      applied = true;
      return BREAK;
    },
  });
  return applied;
}

/**
 * The Rust planner for every operation, but those that defer or stream part of their result, which run on the
 * JavaScript planner (graphql-tools' executor over the stitched supergraph, the one QUERY_PLANNER=js uses for
 * everything).
 *
 * router-runtime 1.4.23 cannot defer: its planner (@graphql-hive/router-query-planner 0.0.38) plans a deferred fragment
 * inline, as if it had no @defer, and its executor has no case for a `Defer` plan node (`executePlanNode` throws
 * "Invalid plan node"); it returns one result, whatever the client accepts. @defer at the gateway level is still
 * open upstream (graphql-hive/router#15). Planning a deferred fragment again ourselves would mean writing the
 * executor's merge and the primary/deferred split by hand; the JavaScript planner already executes @defer with
 * subgraph fetches per deferred fragment, and @stream by streaming the list the subgraph returned whole. So the
 * default stays fast (no other operation changes path, and the stitched schema is only built on the first such
 * operation) and incremental delivery is served by code the runtime maintains.
 */
export const unifiedGraphHandlerWithDefer: UnifiedGraphHandler = async (options) => {
  const rust = await unifiedGraphHandler(options);
  const sdl = options.getUnifiedGraphSDL();
  const planned = rust.executor!;
  let stitched: Executor | undefined;
  const incremental = (): Executor => (stitched ??= executorFromSchema(handleFederationSupergraph(withoutStreamUpstream(options)).unifiedGraph));
  // The JavaScript planner serves no labelled @override consistently (progressive-override.ts): with one in the
  // supergraph, an incremental operation is planned by the Rust planner like any other, and answered whole.
  const whole = hasLabelledOverride(sdl);
  return withIncrementalDirectives(sdl, {
    ...rust,
    executor: (request) =>
      !deliversIncrementally(request.document, request.variables)
        ? planned(request)
        : whole
          ? planned({ ...request, document: withoutIncremental(request.document) } as typeof request)
          : incremental()(request),
  });
};

const stripped = { defer: new WeakMap<DocumentNode, DocumentNode>(), stream: new WeakMap<DocumentNode, DocumentNode>() };

/**
 * The document without a directive, its fragments left where they stand: the same selections, answered at once (a
 * server may deliver deferred fields and streamed items in the initial answer). One per document, as the Rust
 * planner's plan cache keys on the document object.
 */
function withoutDirective(document: DocumentNode, name: 'defer' | 'stream'): DocumentNode {
  let whole = stripped[name].get(document);
  if (!whole) {
    whole = visit(document, { Directive: (node) => (node.name.value === name ? null : undefined) });
    stripped[name].set(document, whole);
  }
  return whole;
}

const withoutIncremental = (document: DocumentNode): DocumentNode => withoutDirective(withoutDirective(document, 'defer'), 'stream');

/**
 * The JavaScript planner passes @stream on to the subgraph that owns the list, which cannot serve it (Apollo Server on
 * graphql 16 answers `Unknown directive "@stream"`). So each subgraph is asked for the whole list, and the gateway
 * streams the list it gets back, following the client's document, which keeps its @stream.
 */
function withoutStreamUpstream(options: UnifiedGraphHandlerOpts): UnifiedGraphHandlerOpts {
  const execute = options.onSubgraphExecute;
  return {
    ...options,
    onSubgraphExecute: (subgraphName, request) =>
      execute(subgraphName, directivesIn(request.document).has('stream') ? { ...request, document: withoutDirective(request.document, 'stream') } : request),
  };
}


/** The JavaScript planner (QUERY_PLANNER=js), its schema declaring @defer and @stream as the Rust one's does. */
export const federationHandlerWithDefer: UnifiedGraphHandler = (options) =>
  withIncrementalDirectives(options.getUnifiedGraphSDL(), handleFederationSupergraph(withoutStreamUpstream(options)));

/**
 * The handler's schema with @defer and @stream declared. The runtime's `deferStream` declares them by replacing the
 * schema it was given (yoga's useDeferStream) unless they are there, and an operation on a replaced schema is not
 * pinned to its supergraph by the graceful reload (the runtime finds the generation by the schema object), so mutations
 * in flight during a reload ran on the new one. Declared here, nothing is replaced.
 */
function withIncrementalDirectives<T extends UnifiedGraphHandlerResult>(sdl: string, result: T): T {
  const schema = result.unifiedGraph;
  const missing = [GraphQLDeferDirective, GraphQLStreamDirective].filter((directive) => !schema.getDirective(directive.name));
  let unifiedGraph = schema;
  if (missing.length > 0) {
    unifiedGraph = new GraphQLSchema({ ...schema.toConfig(), directives: [...schema.getDirectives(), ...missing] });
    unifiedGraph.extensions = schema.extensions;
  }
  deferrableTypes.set(unifiedGraph, deferrableTypesOf(sdl, unifiedGraph));
  return unifiedGraph === schema ? result : { ...result, unifiedGraph };
}

/**
 * The types a deferred fragment may stand in, by schema: the query root, the object types some subgraph resolves by a
 * key (the entities), which the JavaScript planner fetches again, by their key, for the fragment's fields, and the
 * interfaces only entities implement (Node).
 */
const deferrableTypes = new WeakMap<GraphQLSchema, ReadonlySet<string>>();

/** The query root, every object type with a resolvable `@join__type(key:)` in the supergraph, and the interfaces of only those. */
export function deferrableTypesOf(sdl: string, schema: GraphQLSchema): ReadonlySet<string> {
  const names = new Set<string>();
  const query = schema.getQueryType();
  if (query) names.add(query.name);
  const resolvableKey = (directive: ConstDirectiveNode) =>
    directive.name.value === 'join__type' &&
    directive.arguments?.some((argument) => argument.name.value === 'key') === true &&
    !directive.arguments.some((argument) => argument.name.value === 'resolvable' && argument.value.kind === Kind.BOOLEAN && !argument.value.value);
  for (const definition of parse(sdl, { noLocation: true }).definitions) {
    if ((definition.kind === Kind.OBJECT_TYPE_DEFINITION || definition.kind === Kind.OBJECT_TYPE_EXTENSION) && definition.directives?.some(resolvableKey)) {
      names.add(definition.name.value);
    }
  }
  // Not a union: its members' fragments are cut to nothing in the first fetch, entities or not (observed with
  // UpdateOrderResult's Order).
  for (const type of Object.values(schema.getTypeMap())) {
    if (isInterfaceType(type)) {
      const implementations = schema.getPossibleTypes(type);
      if (implementations.length > 0 && implementations.every((implementation) => names.has(implementation.name))) names.add(type.name);
    }
  }
  return names;
}

const served = new WeakMap<GraphQLSchema, WeakMap<DocumentNode, DocumentNode>>();

/**
 * The document with @defer only where the JavaScript planner can deliver the fragment later: in the query root, an
 * entity, or an interface only entities implement. A subgraph here serves no @defer, so @graphql-tools/delegate 12.3.3 (filterSelectionSet, under
 * finalizeGatewayRequest) sends it a deferred fragment cut down to the fields the fragment depends on (its type's
 * key), and leaves the fragment's own fields to type merging, which fetches them later by that key. Inside an object
 * no subgraph resolves by a key (orders' LineItem) or a union (UpdateOrderResult, even for its entity Order) nothing
 * fetches them: a non-null one fails as "Cannot return null for non-nullable field", an internal error that nulls
 * up to the nearest nullable field (a mutation's whole answer, though its write is done), a nullable one is null
 * with no error. Upstream the fix is to keep such a fragment's fields in the first fetch; meanwhile it is answered
 * here with the object that holds it, as if it had no @defer (a server may deliver deferred fields at once). Taken
 * out before execution, so the planner choice and every plugin after this one (the parts' format, the caches,
 * tracing) see the same operation. One per document and schema.
 */
export function withServableDefers(schema: GraphQLSchema, document: DocumentNode, deferrable = deferrableTypes.get(schema)): DocumentNode {
  if (!deferrable || !directivesIn(document).has('defer')) return document;
  let bySchema = served.get(schema);
  if (!bySchema) served.set(schema, (bySchema = new WeakMap()));
  let servable = bySchema.get(document);
  if (!servable) {
    const typeInfo = new TypeInfo(schema);
    const inPlace = (node: InlineFragmentNode | FragmentSpreadNode) => {
      const parent = typeInfo.getParentType();
      if (!parent || deferrable.has(parent.name) || !node.directives?.some((directive) => directive.name.value === 'defer')) return undefined;
      return { ...node, directives: node.directives.filter((directive) => directive.name.value !== 'defer') };
    };
    servable = visit(document, visitWithTypeInfo(typeInfo, { InlineFragment: inPlace, FragmentSpread: inPlace }));
    bySchema.set(document, servable);
  }
  return servable;
}

/** Whether an HTTP request accepts incremental delivery in a format served (incremental-format.ts). */
export const acceptsIncremental = (request: Request): boolean => acceptedIncrementalFormat(request.headers.get('accept')) !== undefined;

const ACCEPTED = `${INCREMENTAL_MEDIA_TYPES['v0.2']}, ${INCREMENTAL_MEDIA_TYPES['20220824']}, text/event-stream`;

const notAcceptable = () =>
  new GraphQLError(
    `This operation uses @defer or @stream, which is answered in parts: add the HTTP header 'Accept: ${INCREMENTAL_MEDIA_TYPES['v0.2']}' (graphql-js 17's format) or '${INCREMENTAL_MEDIA_TYPES['20220824']}' (or text/event-stream)`,
    { extensions: { code: ErrorCode.NOT_ACCEPTABLE, http: { status: 406, headers: { accept: ACCEPTED } } } },
  );

const inBatch = () =>
  new GraphQLError('An HTTP batch is answered as one JSON array, which cannot carry parts: send an operation with @defer or @stream on its own', {
    extensions: { code: ErrorCode.NOT_ACCEPTABLE, http: { status: 406 } },
  });

/**
 * An operation that delivers part of its answer later is refused (406 NOT_ACCEPTABLE) before anything is fetched when
 * its HTTP request does not accept an answer in parts, as Apollo Router does (its DEFER_BAD_HEADER): a client that
 * cannot read the later parts would see an incomplete result as if it were whole. So is one inside an HTTP batch, whose
 * answer is one JSON array (yoga would write its parts as `{}`). WebSocket clients get each part as a `next`, in the
 * 2022-08-24 format, as do event streams; a multipart answer is written in the format its Accept header prefers, and
 * its Content-Type names it.
 */
export function useIncrementalDelivery(): GatewayPlugin {
  const batches = new WeakSet<Request>();
  const formats = new WeakMap<Request, IncrementalFormat>();
  /** The operations of requests answered in the current format, which rewriting their parts follows. */
  const current = new WeakMap<Request, IncrementalOperation>();
  return {
    onRequestParse({ request }) {
      return {
        onRequestParseDone({ requestParserResult }) {
          if (Array.isArray(requestParserResult)) batches.add(request);
        },
      };
    },
    onExecute({ args, setResultAndStopExecution }) {
      args.document = withServableDefers(args.schema, args.document);
      const { request, socket } = args.contextValue as { request?: Request; socket?: unknown };
      if (!request || socket || !deliversIncrementally(args.document, args.variableValues)) return;
      if (batches.has(request)) return setResultAndStopExecution({ errors: [inBatch()] });
      const format = acceptedIncrementalFormat(request.headers.get('accept'));
      if (!format) return setResultAndStopExecution({ errors: [notAcceptable()] });
      formats.set(request, format);
      if (format === 'v0.2') current.set(request, { schema: args.schema, document: args.document, operationName: args.operationName, variables: args.variableValues });
    },
    onResultProcess({ request, result, setResult }) {
      const operation = current.get(request);
      if (operation && typeof result === 'object' && result !== null && Symbol.asyncIterator in result) {
        setResult(toCurrentFormat(result as AsyncIterable<LegacyPart>, operation) as unknown as typeof result);
      }
    },
    onResponse({ request, response }) {
      const format = formats.get(request);
      const contentType = response.headers.get('content-type');
      if (format && contentType?.startsWith('multipart/mixed')) response.headers.set('content-type', `${contentType}; ${INCREMENTAL_MEDIA_TYPES[format].split(';')[1]}`);
    },
  };
}
