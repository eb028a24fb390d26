// Bounds on the values a request carries (operation name, variables, strings in the document and per argument),
// checked before anything parses, hashes or counts them.
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';
import { ErrorCode } from '@ordergraph/core';
import {
  GraphQLError,
  Kind,
  getNamedType,
  getNullableType,
  isInputObjectType,
  isListType,
  validate,
  type ASTVisitor,
  type DocumentNode,
  type GraphQLInputType,
  type GraphQLSchema,
  type ValidationRule,
} from 'graphql';

export interface InputLimits {
  maxOperationNameLength: number;
  /** Containers (objects, lists) nested in the variables, the variables object itself excluded. */
  maxVariablesDepth: number;
  /** Values in the variables, containers included. */
  maxVariableValues: number;
  /** Characters of any string, in the variables or the document. */
  maxStringLength: number;
  /** Tighter limits by schema coordinate: `Query.search(query:)` for an argument, `CreateUserInput.email` for a field. */
  stringLimits: Readonly<Record<string, number>>;
}

/** At most this many characters of any input are quoted back, in a message or a log line. */
const QUOTED_CHARACTERS = 32;

/** Client input as it may appear in a message: its first characters, in quotes. */
export const quoted = (text: string): string => JSON.stringify(text.length > QUOTED_CHARACTERS ? `${text.slice(0, QUOTED_CHARACTERS)}…` : text);

/** A request refused before execution: 400, or 200 for application/json clients, as a validation failure. */
export const refusal = (code: ErrorCode, message: string, extensions: Record<string, unknown> = {}) =>
  new GraphQLError(message, { extensions: { code, ...extensions, http: { spec: true, status: 400 } } });

export const operationNameTooLong = (name: string, maxLength: number) =>
  refusal(ErrorCode.OPERATION_NAME_TOO_LONG, `Operation name ${quoted(name)} is longer than ${maxLength} characters`, {
    maxOperationNameLength: maxLength,
  });

const stringTooLong = (where: string, maxLength: number, length: number) =>
  refusal(ErrorCode.STRING_TOO_LONG, `${where} is ${length} characters long; at most ${maxLength} are allowed`, { maxLength, length });

/**
 * The variables' shape, walked without recursion (so no depth overflows the stack) and counted before each container
 * is opened (so a huge object costs no more than the limit).
 */
function checkVariables(variables: unknown, limits: InputLimits): GraphQLError | undefined {
  if (variables === null || typeof variables !== 'object') return undefined;
  const tooMany = () =>
    refusal(ErrorCode.VARIABLES_LIMIT_EXCEEDED, `Variables hold more than ${limits.maxVariableValues} values`, {
      maxVariableValues: limits.maxVariableValues,
    });
  const pending: [unknown, number][] = [[variables, 0]];
  let values = 0;
  while (pending.length > 0) {
    const [value, depth] = pending.pop()!;
    if (typeof value === 'string') {
      if (value.length > limits.maxStringLength) return stringTooLong('A string in the variables', limits.maxStringLength, value.length);
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    if (depth > limits.maxVariablesDepth) {
      return refusal(ErrorCode.VARIABLES_LIMIT_EXCEEDED, `Variables are nested deeper than ${limits.maxVariablesDepth} levels`, {
        maxVariablesDepth: limits.maxVariablesDepth,
      });
    }
    if (Array.isArray(value)) {
      if ((values += value.length) > limits.maxVariableValues) return tooMany();
      for (const item of value) pending.push([item, depth + 1]);
      continue;
    }
    const keys = Object.keys(value);
    if ((values += keys.length) > limits.maxVariableValues) return tooMany();
    for (const key of keys) {
      if (key.length > limits.maxStringLength) return stringTooLong('A name in the variables', limits.maxStringLength, key.length);
      pending.push([(value as Record<string, unknown>)[key], depth + 1]);
    }
  }
  return undefined;
}

/** Where a variable's value must be measured: a position with its own limit, or an input object holding such fields. */
type VariableUse = { variable: string; coordinate: string; maxLength: number } | { variable: string; type: GraphQLInputType };

/** Each document's variables to measure at execution (found while it was validated, once per document and schema). */
const variableUses = new WeakMap<DocumentNode, { schema: GraphQLSchema; uses: VariableUse[] }>();

/** Whether an input type holds, at any depth, a field with a limit of its own. */
function holdsLimitedField(type: GraphQLInputType, stringLimits: InputLimits['stringLimits'], seen = new Set<string>()): boolean {
  const named = getNamedType(type);
  if (!isInputObjectType(named) || seen.has(named.name)) return false;
  seen.add(named.name);
  return Object.values(named.getFields()).some(
    (field) => stringLimits[`${named.name}.${field.name}`] !== undefined || holdsLimitedField(field.type, stringLimits, seen),
  );
}

/**
 * String literals within MAX_STRING_LENGTH, and within their argument's or input field's own limit; variables in such
 * positions are noted for execution, when their values are known.
 */
export function stringLengthRule(limits: InputLimits): ValidationRule {
  return function stringLengthRule(context): ASTVisitor {
    const uses: VariableUse[] = [];
    const check = (coordinate: string | undefined, value: { kind: Kind; value?: unknown; name?: { value: string } }, type: GraphQLInputType | null | undefined) => {
      const maxLength = coordinate === undefined ? undefined : limits.stringLimits[coordinate];
      if (value.kind === Kind.STRING && maxLength !== undefined && (value.value as string).length > maxLength) {
        context.reportError(stringTooLong(coordinate!, maxLength, (value.value as string).length));
      } else if (value.kind === Kind.VARIABLE) {
        const variable = value.name!.value;
        if (maxLength !== undefined) uses.push({ variable, coordinate: coordinate!, maxLength });
        else if (type && holdsLimitedField(type, limits.stringLimits)) uses.push({ variable, type });
      }
    };
    return {
      StringValue(node) {
        if (node.value.length > limits.maxStringLength) context.reportError(stringTooLong('A string in the document', limits.maxStringLength, node.value.length));
      },
      Argument(node) {
        const parent = context.getParentType();
        const field = context.getFieldDef();
        const argument = context.getArgument();
        if (!parent || !field || !argument) return; // a directive's argument, or one validation reports as unknown
        check(`${parent.name}.${field.name}(${argument.name}:)`, node.value, argument.type);
      },
      ObjectField(node) {
        const parent = getNamedType(context.getParentInputType());
        check(isInputObjectType(parent) ? `${parent.name}.${node.name.value}` : undefined, node.value, context.getInputType());
      },
      Document: {
        leave(document) {
          variableUses.set(document, { schema: context.getSchema(), uses });
        },
      },
    };
  };
}

/** The first string over its limit in an input value of this type, walked by type. */
function overLimit(value: unknown, type: GraphQLInputType, stringLimits: InputLimits['stringLimits']): GraphQLError | undefined {
  const pending: [unknown, GraphQLInputType][] = [[value, type]];
  while (pending.length > 0) {
    const [current, currentType] = pending.pop()!;
    if (current === null || current === undefined) continue;
    const nullable = getNullableType(currentType);
    if (isListType(nullable)) {
      if (Array.isArray(current)) for (const item of current) pending.push([item, nullable.ofType]);
      else pending.push([current, nullable.ofType]);
    } else if (isInputObjectType(nullable) && typeof current === 'object') {
      for (const field of Object.values(nullable.getFields())) {
        const fieldValue = (current as Record<string, unknown>)[field.name];
        const maxLength = stringLimits[`${nullable.name}.${field.name}`];
        if (maxLength !== undefined && typeof fieldValue === 'string' && fieldValue.length > maxLength) {
          return stringTooLong(`${nullable.name}.${field.name}`, maxLength, fieldValue.length);
        }
        pending.push([fieldValue, field.type]);
      }
    }
  }
  return undefined;
}

function checkVariableUses(document: DocumentNode, schema: GraphQLSchema, variables: Record<string, unknown> | null | undefined, limits: InputLimits) {
  const entry = variableUses.get(document);
  if (!entry || entry.schema !== schema || !variables) return undefined;
  for (const use of entry.uses) {
    const value = variables[use.variable];
    if ('maxLength' in use) {
      if (typeof value === 'string' && value.length > use.maxLength) return stringTooLong(use.coordinate, use.maxLength, value.length);
    } else {
      const error = overLimit(value, use.type, limits.stringLimits);
      if (error) return error;
    }
  }
  return undefined;
}

// The operation name's length and the depth, number and string lengths of the variables are checked on the request's
// parameters; string lengths in the document and per argument (STRING_LIMITS) once per document, before the rest of
// validation.
export function useInputLimits(limits: InputLimits): GatewayPlugin {
  const rule = stringLengthRule(limits);
  const checkUses = ({ args, setResultAndStopExecution }: {
    args: { schema: GraphQLSchema; document: DocumentNode; variableValues?: Record<string, unknown> | null };
    setResultAndStopExecution(result: { errors: GraphQLError[] }): void;
  }) => {
    const error = checkVariableUses(args.document, args.schema, args.variableValues, limits);
    if (error) setResultAndStopExecution({ errors: [error] });
  };
  return {
    onParams({ params }) {
      const { operationName, variables } = params as { operationName?: unknown; variables?: unknown };
      if (typeof operationName === 'string' && operationName.length > limits.maxOperationNameLength) {
        throw operationNameTooLong(operationName, limits.maxOperationNameLength);
      }
      const error = checkVariables(variables, limits);
      if (error) throw error;
    },
    // Before the rest of validation, and alone: a document with a string over its limit is not validated any further.
    onValidate({ validateFn, setValidationFn }) {
      setValidationFn((schema, document, rules, typeInfo, options) => {
        const errors = validate(schema, document, [rule]);
        return errors.length > 0 ? errors : validateFn(schema, document, rules, typeInfo, options);
      });
    },
    onExecute: checkUses,
    onSubscribe: checkUses,
  };
}
