// Operation limits (nesting, tokens, names, expanded size, depth, aliases, directives, duplicated fields, complexity), all
// enforced before any subgraph is called.
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';
import { getDirectiveExtensions } from '@graphql-tools/utils';
import { ErrorCode } from '@ordergraph/core';
import {
  GraphQLError,
  Kind,
  getNamedType,
  getNullableType,
  getOperationAST,
  isListType,
  parse,
  validate,
  type ASTVisitor,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLResolveInfo,
  type GraphQLSchema,
  type SelectionSetNode,
  type ValidationRule,
} from 'graphql';
import { getComplexity, type ComplexityEstimator } from 'graphql-query-complexity';
import { bracketNesting, expandedSizes } from './document-shape.js';
import { operationNameTooLong, refusal } from './input.js';

export interface OperationLimits {
  maxNesting: number;
  maxFields: number;
  maxDepth: number;
  maxComplexity: number;
  maxAliases: number;
  maxTokens: number;
  maxDirectivesPerField: number;
  maxDuplicateFields: number;
  maxOperationNameLength: number;
}

/** Arguments that name how many items a list field returns. */
const PAGE_ARGUMENTS = ['first', 'last', 'limit'];
const DEFAULT_LIST_FACTOR = 10;
const INTROSPECTION_LIST_FACTOR = 2;
/**
 * graphql-query-complexity stops counting after this many field evaluations (abstract types multiply them past the
 * fields the parser let through); we then reject.
 */
const MAX_EVALUATED_NODES = 10_000;
const TOO_MANY_NODES = 'Query exceeds the maximum allowed number of nodes.';

type ParserLimits = Pick<OperationLimits, 'maxNesting' | 'maxTokens' | 'maxOperationNameLength' | 'maxFields' | 'maxDepth' | 'maxAliases'>;

/**
 * The document parser every edge plugin shares, so that no plugin, library or planner ever holds a document over a
 * limit: the nesting of its brackets is scanned first (graphql-js's parser recurses on it), then graphql-js's own
 * parser aborts past the token limit, operation names over their limit are refused (names label metrics and
 * rate-limit buckets), and each operation's size once its fragments are expanded (document-shape.ts, one linear pass)
 * is held to the depth, alias and field limits.
 */
export const limitedParser =
  (limits: ParserLimits) =>
  (source: string): DocumentNode => {
    const { maxNesting, maxTokens, maxOperationNameLength, maxDepth, maxAliases, maxFields } = limits;
    const nesting = bracketNesting(source, maxNesting);
    if (nesting > maxNesting) {
      throw refusal(ErrorCode.NESTING_LIMIT_EXCEEDED, `The document nests brackets deeper than ${maxNesting} levels`, { maxNesting });
    }
    let document: DocumentNode;
    try {
      document = parse(source, { maxTokens });
    } catch (error) {
      if (error instanceof GraphQLError && error.message.endsWith('tokens. Parsing aborted.')) {
        throw refusal(ErrorCode.TOKEN_LIMIT_EXCEEDED, `The document has more than ${maxTokens} tokens`, { maxTokens });
      }
      throw error;
    }
    for (const definition of document.definitions) {
      const name = definition.kind === Kind.OPERATION_DEFINITION ? definition.name?.value : undefined;
      if (name && name.length > maxOperationNameLength) throw operationNameTooLong(name, maxOperationNameLength);
    }
    for (const { depth, aliases, fields } of expandedSizes(document)) {
      if (depth > maxDepth) {
        throw refusal(ErrorCode.DEPTH_LIMIT_EXCEEDED, `Query depth ${depth} exceeds the maximum depth of ${maxDepth}`, { maxDepth, depth });
      }
      if (aliases > maxAliases) {
        throw refusal(ErrorCode.ALIAS_LIMIT_EXCEEDED, `Aliases limit of ${maxAliases} exceeded, found ${countOf(aliases)}.`, { maxAliases });
      }
      if (fields > maxFields) {
        throw refusal(ErrorCode.FIELD_LIMIT_EXCEEDED, `The operation selects ${countOf(fields)} fields once its fragments are expanded; at most ${maxFields} are allowed`, {
          maxFields,
          fields: Number.isSafeInteger(fields) ? fields : null,
        });
      }
    }
    return document;
  };

/** A count for a message: past 2^53 (a fragment bomb's), only its order of magnitude is exact anyway. */
const countOf = (count: number): string => (Number.isSafeInteger(count) ? String(count) : `more than ${Number.MAX_SAFE_INTEGER}`);

function limitExceeded(code: ErrorCode, message: string, extensions: Record<string, unknown>): GraphQLError {
  return new GraphQLError(message, { extensions: { code, ...extensions } });
}

/** Hand-written: graphql-armor's max-directives counts directives per operation, the design bounds them per field. */
export function maxDirectivesPerFieldRule(maxDirectives: number): ValidationRule {
  return function maxDirectivesPerFieldRule(context): ASTVisitor {
    const check = (node: { directives?: readonly unknown[] | undefined }) => {
      const directives = node.directives?.length ?? 0;
      if (directives > maxDirectives) {
        context.reportError(
          new GraphQLError(`A selection carries ${directives} directives; at most ${maxDirectives} are allowed`, {
            extensions: { code: ErrorCode.DIRECTIVE_LIMIT_EXCEEDED, maxDirectives, directives },
          }),
        );
      }
    };
    return { Field: check, FragmentSpread: check, InlineFragment: check };
  };
}

/**
 * Fields repeated within one selection set as written (`__typename __typename ...`), counted over the whole document:
 * they cost execution and response size for nothing. Repeats that come from merging fragments are not counted.
 */
export function maxDuplicateFieldsRule(maxDuplicates: number): ValidationRule {
  return function maxDuplicateFieldsRule(context): ASTVisitor {
    let duplicates = 0;
    return {
      SelectionSet(node) {
        const keys = new Set<string>();
        for (const selection of node.selections) {
          if (selection.kind !== Kind.FIELD) continue;
          const key = (selection.alias ?? selection.name).value;
          if (keys.has(key)) duplicates++;
          else keys.add(key);
        }
      },
      Document: {
        leave() {
          if (duplicates > maxDuplicates) {
            context.reportError(
              new GraphQLError(`The document repeats ${duplicates} fields; at most ${maxDuplicates} repeats are allowed`, {
                extensions: { code: ErrorCode.DUPLICATE_FIELD_LIMIT_EXCEEDED, maxDuplicateFields: maxDuplicates, duplicates },
              }),
            );
          }
        },
      },
    };
  };
}

/** Errors with the same message are one error at several places: ten unknown `@aa` directives are one mistake. */
function mergeRepeats(errors: readonly GraphQLError[]): readonly GraphQLError[] {
  const byMessage = new Map<string, GraphQLError[]>();
  for (const error of errors) byMessage.set(error.message, [...(byMessage.get(error.message) ?? []), error]);
  if (byMessage.size === errors.length) return errors;
  return [...byMessage.values()].map(([first, ...repeats]) => {
    if (repeats.length === 0 || !first!.nodes) return first!;
    const nodes = [first!, ...repeats].flatMap((error) => error.nodes ?? []);
    return new GraphQLError(first!.message, { nodes, extensions: first!.extensions });
  });
}

/** What the cost of each field node came to while measuring one operation, for its parent's `sizedFields`. */
type FieldCosts = Map<FieldNode, { cost: number; unsized: number }>;

interface ListSize {
  assumedSize?: number;
  slicingArguments?: string[];
  sizedFields?: string[];
}

const weightOf = (directives: Record<string, unknown[] | undefined>): number | undefined => {
  const weight = (directives['cost']?.[0] as { weight?: unknown } | undefined)?.weight;
  return typeof weight === 'number' ? weight : undefined;
};

/**
 * A schema element's directives, read once: getDirectiveExtensions builds them anew on every call, and a request's
 * cost visits every field it selects. Keyed by the element, which belongs to one schema and goes with it.
 */
const directivesRead = new WeakMap<object, Record<string, unknown[] | undefined>>();
function directivesOf(element: GraphQLField<unknown, unknown> | GraphQLArgument | GraphQLNamedType, schema: GraphQLSchema): Record<string, unknown[] | undefined> {
  let directives = directivesRead.get(element);
  if (!directives) directivesRead.set(element, (directives = getDirectiveExtensions(element, schema)));
  return directives;
}

/** A field's own weight: its @cost, else its type's @cost, else 1 (every field costs 1, scalars included). */
function fieldWeight(schema: GraphQLSchema, field: GraphQLField<unknown, unknown>): number {
  return weightOf(directivesOf(field, schema)) ?? weightOf(directivesOf(getNamedType(field.type), schema)) ?? 1;
}

/** The @cost weights of the arguments the document gives. */
function argumentsWeight(schema: GraphQLSchema, field: GraphQLField<unknown, unknown>, node: FieldNode): number {
  let weight = 0;
  for (const argument of field.args) {
    if (node.arguments?.some((given) => given.name.value === argument.name)) weight += weightOf(directivesOf(argument, schema)) ?? 0;
  }
  return weight;
}

const fragmentsOf = (document: DocumentNode): Record<string, FragmentDefinitionNode> =>
  Object.fromEntries(document.definitions.flatMap((definition) => (definition.kind === Kind.FRAGMENT_DEFINITION ? [[definition.name.value, definition]] : [])));

/** The field nodes a selection set selects directly, through inline fragments and fragment spreads. */
function selectedFields(selectionSet: SelectionSetNode | undefined, fragments: Record<string, FragmentDefinitionNode>, seen = new Set<string>()): FieldNode[] {
  return (selectionSet?.selections ?? []).flatMap((selection) => {
    if (selection.kind === Kind.FIELD) return [selection];
    if (selection.kind === Kind.INLINE_FRAGMENT) return selectedFields(selection.selectionSet, fragments, seen);
    const name = selection.name.value;
    if (seen.has(name)) return [];
    seen.add(name);
    return selectedFields(fragments[name]?.selectionSet, fragments, seen);
  });
}

/**
 * The cost of a field, after the IBM cost specification that Federation's `@cost` and `@listSize` follow: its weight
 * (`@cost` on the field, else on its type, else 1) plus the weights of the arguments given, plus what it selects. A
 * list multiplies what it selects by its size: the largest of its `@listSize` slicing arguments (their defaults
 * included), else its assumed size, else the `first`/`last`/`limit` argument the document gives, else 10 (2 for
 * introspection lists: every variant of graphql-js's introspection query then stays under 1000). With `sizedFields`
 * (a connection), the size multiplies those fields instead of the whole selection, and they are not multiplied again.
 */
const costEstimator = (schema: GraphQLSchema, fragments: Record<string, FragmentDefinitionNode>, costs: FieldCosts): ComplexityEstimator =>
  ({ type, field, node, args, childComplexity }) => {
    const weight = fieldWeight(schema, field) + argumentsWeight(schema, field, node);
    const unsized = weight + childComplexity;
    const listSize = directivesOf(field, schema)['listSize']?.[0] as ListSize | undefined;
    let size: number | undefined;
    if (listSize) {
      const sliced = (listSize.slicingArguments ?? []).map((name) => args[name] as unknown).filter((value): value is number => typeof value === 'number');
      size = sliced.length > 0 ? Math.max(...sliced) : (listSize.assumedSize ?? DEFAULT_LIST_FACTOR);
    } else {
      const given = PAGE_ARGUMENTS.filter((name) => node.arguments?.some((argument) => argument.name.value === name))
        .map((name) => args[name] as unknown)
        .filter((value): value is number => typeof value === 'number');
      if (given.length > 0) size = Math.max(...given);
      else if (isListType(getNullableType(field.type))) {
        const introspection = type.name.startsWith('__') || getNamedType(field.type).name.startsWith('__');
        size = introspection ? INTROSPECTION_LIST_FACTOR : DEFAULT_LIST_FACTOR;
      }
    }
    let cost: number;
    if (size !== undefined && listSize?.sizedFields?.length) {
      const sized = selectedFields(node.selectionSet, fragments).filter((child) => listSize.sizedFields!.includes(child.name.value));
      const sizedCost = sized.reduce((sum, child) => sum + (costs.get(child)?.cost ?? 0), 0);
      const sizedUnsized = sized.reduce((sum, child) => sum + (costs.get(child)?.unsized ?? 0), 0);
      cost = weight + childComplexity - sizedCost + size * sizedUnsized;
    } else {
      cost = size === undefined ? unsized : weight + size * childComplexity;
    }
    costs.set(node, { cost, unsized });
    return cost;
  };

/**
 * The actual cost of a result, counted field by field as graphql-js completes it (tracing.ts reads every field of a
 * traced result anyway): the estimate's weights, with each list's estimated size replaced by the items it returned.
 * A field present costs its weight and its given arguments' once, what it selects is paid per item returned, and a
 * sized field of a connection (`edges`) is paid per item as the estimate multiplies it. A null costs its weight only.
 */
export function actualCost(): { visit(info: GraphQLResolveInfo, value: unknown): void; total(): number } {
  const fields = new Map<string, GraphQLField<unknown, unknown>>();
  const keyOf = (path: GraphQLResolveInfo['path'] | undefined): string => (path ? `${keyOf(path.prev)}.${path.key}` : '');
  let total = 0;
  return {
    visit(info, value) {
      const field = info.parentType.getFields()[info.fieldName];
      if (!field) return;
      fields.set(keyOf(info.path), field);
      const weight = fieldWeight(info.schema, field) + argumentsWeight(info.schema, field, info.fieldNodes[0]!);
      const parent = info.path.prev ? fields.get(keyOf(info.path.prev)) : undefined;
      const sizedBy = parent && (directivesOf(parent, info.schema)['listSize']?.[0] as ListSize | undefined)?.sizedFields;
      total += sizedBy?.includes(info.fieldName) && Array.isArray(value) ? weight * value.length : weight;
    },
    total: () => total,
  };
}

/**
 * The complexity of the operation a request executes, or undefined when its variables do not coerce (execution then
 * reports that, before any subgraph is called). Infinity when the document is too large to measure.
 */
function measureComplexity(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Record<string, unknown> | undefined,
): number | undefined {
  const operation = getOperationAST(document, operationName);
  if (!operation) return undefined;
  try {
    return getComplexity({
      schema,
      query: document,
      variables: variables ?? {},
      ...(operation.name ? { operationName: operation.name.value } : {}),
      estimators: [costEstimator(schema, fragmentsOf(document), new Map())],
      maxQueryNodes: MAX_EVALUATED_NODES,
    });
  } catch (error) {
    if (error instanceof GraphQLError && error.message === TOO_MANY_NODES) return Infinity;
    return undefined;
  }
}

export function complexityError(maxComplexity: number, complexity: number): GraphQLError {
  const measured = Number.isFinite(complexity) ? complexity : `more than ${MAX_EVALUATED_NODES} fields`;
  return limitExceeded(
    ErrorCode.COMPLEXITY_LIMIT_EXCEEDED,
    `Query complexity ${measured} exceeds the maximum complexity of ${maxComplexity}`,
    // The request was refused before execution, as a validation failure would be (400 for graphql-response+json).
    { maxComplexity, complexity: Number.isFinite(complexity) ? complexity : null, http: { spec: true, status: 400 } },
  );
}

/** Variable values a document is measured with, per document; past this many the oldest are forgotten. */
const COMPLEXITIES_PER_DOCUMENT = 64;

/**
 * Types whose values cannot change a complexity: a list's size is read from an Int argument and @skip/@include from a
 * Boolean, and validation lets no ID or String variable stand for either. Varied traffic differs mostly in them (an ID
 * per request), so leaving them out of the key measures each document once, not once per ID.
 */
const INERT_VARIABLE_TYPES = new Set(['ID', 'String']);

/** The variables of the operation whose values the complexity may depend on; every one when it is not found. */
function costVariables(document: DocumentNode, operationName: string | null | undefined): string[] | undefined {
  const operation = getOperationAST(document, operationName);
  if (!operation) return undefined;
  return (operation.variableDefinitions ?? [])
    .filter(({ type }) => {
      const named = type.kind === Kind.NON_NULL_TYPE ? type.type : type;
      return named.kind !== Kind.NAMED_TYPE || !INERT_VARIABLE_TYPES.has(named.name.value);
    })
    .map(({ variable }) => variable.name.value);
}

/**
 * The complexity of each document (as parsed and cached by yoga, so one object per distinct text and schema) for each
 * operation name and set of the values it depends on (costVariables): measuring walks the whole document with its
 * types. Bounded: a document yoga's cache drops is collected with its entries, and each keeps its latest
 * COMPLEXITIES_PER_DOCUMENT. A request whose ID or String variable does not coerce may be given the complexity measured
 * for valid ones, which its execution then refuses as ever.
 */
function complexityCache() {
  const byDocument = new WeakMap<DocumentNode, { schema: GraphQLSchema; variables: Map<string, string[] | undefined>; measured: Map<string, number | undefined> }>();
  return (schema: GraphQLSchema, document: DocumentNode, operationName: string | null | undefined, variables: Record<string, unknown> | undefined) => {
    let entry = byDocument.get(document);
    if (!entry || entry.schema !== schema) byDocument.set(document, (entry = { schema, variables: new Map(), measured: new Map() }));
    const name = operationName ?? '';
    if (!entry.variables.has(name)) entry.variables.set(name, costVariables(document, operationName));
    const relevant = entry.variables.get(name);
    // [] for a variable not given (its default applies), [value] for one given, null included.
    const values = relevant ? relevant.map((variable) => (variables && Object.hasOwn(variables, variable) ? [variables[variable]] : [])) : (variables ?? {});
    const key = `${name}\u0000${JSON.stringify(values)}`;
    if (entry.measured.has(key)) return entry.measured.get(key);
    const complexity = measureComplexity(schema, document, operationName, variables);
    if (entry.measured.size >= COMPLEXITIES_PER_DOCUMENT) entry.measured.delete(entry.measured.keys().next().value!);
    entry.measured.set(key, complexity);
    return complexity;
  };
}

/** The cost each operation was measured at, by its context, for tracing to report (tracing.ts). */
export type MeasuredCosts = WeakMap<object, number>;

// Nesting, tokens, operation names and the expanded size (fields, depth, aliases) while parsing; directives per field and
// duplicated fields, which need no expansion, in a first validation pass of their own (before graphql-js validates the
// document against the schema); complexity just before execution (it depends on variables, and Yoga caches validation results per document, so a
// variable-dependent rule must not live in validation).
export function useOperationLimits(
  limits: OperationLimits,
  measured: MeasuredCosts = new WeakMap(),
  parseDocument: (source: string) => DocumentNode = limitedParser(limits),
): GatewayPlugin {
  const shapeRules = [
    maxDirectivesPerFieldRule(limits.maxDirectivesPerField),
    maxDuplicateFieldsRule(limits.maxDuplicateFields),
  ];
  const complexityOf = complexityCache();
  const checkComplexity = ({ args, setResultAndStopExecution }: {
    args: { schema: GraphQLSchema; document: DocumentNode; operationName?: string | null; variableValues?: Record<string, unknown> | null; contextValue?: unknown };
    setResultAndStopExecution(result: { errors: GraphQLError[] }): void;
  }) => {
    const complexity = complexityOf(args.schema, args.document, args.operationName, args.variableValues ?? undefined);
    if (complexity !== undefined && typeof args.contextValue === 'object' && args.contextValue !== null) measured.set(args.contextValue, complexity);
    if (complexity !== undefined && complexity > limits.maxComplexity) {
      setResultAndStopExecution({ errors: [complexityError(limits.maxComplexity, complexity)] });
    }
  };
  return {
    onParse({ setParseFn }) {
      setParseFn(parseDocument);
    },
    // The shape first, alone: a document over a limit is not validated against the schema at all. Yoga caches the
    // outcome per document, so neither pass runs again for a document it has seen.
    onValidate({ validateFn, setValidationFn }) {
      setValidationFn((schema, document, rules, typeInfo, options) => {
        const refused = validate(schema, document, shapeRules);
        return refused.length > 0 ? refused : mergeRepeats(validateFn(schema, document, rules, typeInfo, options));
      });
    },
    onExecute: checkComplexity,
    onSubscribe: checkComplexity,
  };
}
