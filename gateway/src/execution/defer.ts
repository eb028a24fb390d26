// @defer through the gateway: which planner executes an operation that defers part of its answer, and which clients
// may ask for it over HTTP (@stream is refused).
import type { GatewayPlugin, UnifiedGraphHandler } from '@graphql-hive/gateway-runtime';
import { unifiedGraphHandler } from '@graphql-hive/router-runtime';
import { handleFederationSupergraph, type UnifiedGraphHandlerResult } from '@graphql-mesh/fusion-runtime';
import { executorFromSchema } from '@graphql-tools/executor';
import { GraphQLDeferDirective, GraphQLStreamDirective, type Executor } from '@graphql-tools/utils';
import { ErrorCode } from '@ordergraph/core';
import { hasLabelledOverride } from './progressive-override.js';
import { BREAK, GraphQLError, GraphQLSchema, Kind, visit, type DirectiveNode, type DocumentNode, type ValidationRule } from 'graphql';

/**
 * The incremental delivery format served: graphql-js's of 2022-08-24, which yoga writes, Apollo Router speaks and
 * Apollo Client 4 reads with its Defer20220824Handler.
 */
const DEFER_SPEC = 'deferSpec=20220824';
const INCREMENTAL_ACCEPT = `multipart/mixed;${DEFER_SPEC}`;

/** Documents with an @defer anywhere, whatever its `if`: most have none, and pay one visit per document. */
const mentionsDefer = new WeakMap<DocumentNode, boolean>();

/** Whether the directive applies: `if` absent, true, or a variable that is not false (the directive's default is true). */
function applies(directive: DirectiveNode, variables: Readonly<Record<string, unknown>> | null | undefined): boolean {
  const condition = directive.arguments?.find((argument) => argument.name.value === 'if')?.value;
  if (!condition) return true;
  if (condition.kind === Kind.BOOLEAN) return condition.value;
  if (condition.kind === Kind.VARIABLE) return variables?.[condition.name.value] !== false;
  return true;
}

/** Whether executing this document delivers part of its result later: an @defer that applies. */
export function deliversIncrementally(document: DocumentNode, variables?: Readonly<Record<string, unknown>> | null): boolean {
  let mentions = mentionsDefer.get(document);
  if (mentions === undefined) {
    mentions = false;
    visit(document, {
      Directive(node) {
        if (node.name.value !== 'defer') return;
        mentions = true;
        return BREAK;
      },
    });
    mentionsDefer.set(document, mentions);
  }
  if (!mentions) return false;
  let applied = false;
  visit(document, {
    Directive(node) {
      if (node.name.value !== 'defer' || !applies(node, variables)) return;
      applied = true;
      return BREAK;
    },
  });
  return applied;
}

/**
 * The Rust planner for every operation, but those that defer part of their result, which run on the JavaScript
 * planner (graphql-tools' executor over the stitched supergraph, the one QUERY_PLANNER=js uses for everything).
 *
 * router-runtime 1.4.23 cannot defer: its planner (@graphql-hive/router-query-planner 0.0.38) plans a deferred fragment
 * inline, as if it had no @defer, and its executor has no case for a `Defer` plan node (`executePlanNode` throws
 * "Invalid plan node"); it returns one result, whatever the client accepts. @defer at the gateway level is still
 * open upstream (graphql-hive/router#15). Planning a deferred fragment again ourselves would mean writing the
 * executor's merge and the primary/deferred split by hand; the JavaScript planner already executes @defer with
 * subgraph fetches per deferred fragment. So the default stays fast (no other operation changes path, and the stitched
 * schema is only built on the first deferred operation) and @defer is served by code the runtime maintains.
 */
export const unifiedGraphHandlerWithDefer: UnifiedGraphHandler = async (options) => {
  const rust = await unifiedGraphHandler(options);
  const planned = rust.executor!;
  let stitched: Executor | undefined;
  const incremental = (): Executor => (stitched ??= executorFromSchema(handleFederationSupergraph(options).unifiedGraph));
  // The JavaScript planner serves no labelled @override consistently (progressive-override.ts): with one in the
  // supergraph, a deferred operation is planned by the Rust planner like any other, and answered whole.
  const whole = hasLabelledOverride(options.getUnifiedGraphSDL());
  return withIncrementalDirectives({
    ...rust,
    executor: (request) =>
      !deliversIncrementally(request.document, request.variables)
        ? planned(request)
        : whole
          ? planned({ ...request, document: withoutDefer(request.document) } as typeof request)
          : incremental()(request),
  });
};

const undeferred = new WeakMap<DocumentNode, DocumentNode>();

/**
 * The document with every @defer taken out, its fragments inlined where they stand: the same selections, answered
 * at once (a server may deliver deferred fields in the initial answer). One per document, as the Rust planner's
 * plan cache keys on the document object.
 */
function withoutDefer(document: DocumentNode): DocumentNode {
  let stripped = undeferred.get(document);
  if (!stripped) {
    stripped = visit(document, { Directive: (node) => (node.name.value === 'defer' ? null : undefined) });
    undeferred.set(document, stripped);
  }
  return stripped;
}

/** The JavaScript planner (QUERY_PLANNER=js), its schema declaring @defer and @stream as the Rust one's does. */
export const federationHandlerWithDefer: UnifiedGraphHandler = (options) => withIncrementalDirectives(handleFederationSupergraph(options));

/**
 * The handler's schema with @defer and @stream declared. The runtime's `deferStream` declares them by replacing the
 * schema it was given (yoga's useDeferStream) unless they are there, and an operation on a replaced schema is not
 * pinned to its supergraph by the graceful reload (the runtime finds the generation by the schema object), so mutations
 * in flight during a reload ran on the new one. Declared here, nothing is replaced.
 */
function withIncrementalDirectives<T extends UnifiedGraphHandlerResult>(result: T): T {
  const schema = result.unifiedGraph;
  const missing = [GraphQLDeferDirective, GraphQLStreamDirective].filter((directive) => !schema.getDirective(directive.name));
  if (missing.length === 0) return result;
  const unifiedGraph = new GraphQLSchema({ ...schema.toConfig(), directives: [...schema.getDirectives(), ...missing] });
  unifiedGraph.extensions = schema.extensions;
  return { ...result, unifiedGraph };
}

/** Whether one Accept range takes multipart/mixed in the format served: deferSpec=20220824, or no spec named. */
function takesIncremental(range: string): boolean {
  const [type, ...parameters] = range.split(';').map((part) => part.trim().toLowerCase());
  if (type === 'text/event-stream') return true;
  if (type !== 'multipart/mixed') return false;
  const specs = parameters.filter((parameter) => /^[a-z]*spec=/.test(parameter));
  return specs.length === 0 || specs.some((spec) => spec.replace(/"/g, '') === DEFER_SPEC.toLowerCase());
}

/** Whether an HTTP request accepts incremental delivery: multipart/mixed (deferSpec=20220824 or plain) or an event stream. */
export const acceptsIncremental = (request: Request): boolean => (request.headers.get('accept') ?? '').split(',').some(takesIncremental);

const notAcceptable = () =>
  new GraphQLError(
    `This operation uses @defer, which is answered in parts: add the HTTP header 'Accept: ${INCREMENTAL_ACCEPT}' (or text/event-stream)`,
    { extensions: { code: ErrorCode.NOT_ACCEPTABLE, http: { status: 406, headers: { accept: `${INCREMENTAL_ACCEPT}, text/event-stream` } } } },
  );

/**
 * @stream is refused at validation: the runtime's `deferStream` declares it, but the JavaScript planner passes it on to
 * the subgraph that owns the list, and no subgraph here serves it (Apollo Server answers `Unknown directive`).
 */
const noStream: ValidationRule = Object.defineProperty(
  ((context) => ({
    Directive(node) {
      if (node.name.value !== 'stream') return;
      context.reportError(
        new GraphQLError('@stream is not supported: select the whole list, or defer the fragment that holds it with @defer', {
          nodes: node,
          extensions: { code: ErrorCode.GRAPHQL_VALIDATION_FAILED },
        }),
      );
    },
  })) satisfies ValidationRule,
  'name',
  { value: 'NoStream' },
);

const inBatch = () =>
  new GraphQLError('An HTTP batch is answered as one JSON array, which cannot carry parts: send an operation with @defer on its own', {
    extensions: { code: ErrorCode.NOT_ACCEPTABLE, http: { status: 406 } },
  });

/**
 * An operation that defers part of its answer is refused (406 NOT_ACCEPTABLE) before anything is fetched when its HTTP
 * request does not accept an answer in parts, as Apollo Router does (its DEFER_BAD_HEADER): a client that cannot read
 * the later parts would see an incomplete result as if it were whole. So is one inside an HTTP batch, whose answer is
 * one JSON array (yoga would write its parts as `{}`). WebSocket clients get each part as a `next`.
 */
export function useIncrementalDelivery(): GatewayPlugin {
  const batches = new WeakSet<Request>();
  return {
    onValidate({ addValidationRule }) {
      addValidationRule(noStream);
    },
    onRequestParse({ request }) {
      return {
        onRequestParseDone({ requestParserResult }) {
          if (Array.isArray(requestParserResult)) batches.add(request);
        },
      };
    },
    onExecute({ args, setResultAndStopExecution }) {
      const { request, socket } = args.contextValue as { request?: Request; socket?: unknown };
      if (!request || socket || !deliversIncrementally(args.document, args.variableValues)) return;
      if (batches.has(request)) setResultAndStopExecution({ errors: [inBatch()] });
      else if (!acceptsIncremental(request)) setResultAndStopExecution({ errors: [notAcceptable()] });
    },
  };
}
