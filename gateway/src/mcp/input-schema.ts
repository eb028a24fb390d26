// A trusted operation's variables as the JSON Schema of an MCP tool's input: what an agent fills in to call it. Derived
// from the variable definitions against the served API schema, so it changes with the supergraph.
import {
  GraphQLBoolean,
  GraphQLFloat,
  GraphQLID,
  GraphQLInt,
  GraphQLString,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isScalarType,
  Kind,
  typeFromAST,
  valueFromASTUntyped,
  type GraphQLInputObjectType,
  type GraphQLInputType,
  type GraphQLScalarType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type TypeNode,
} from 'graphql';

/** The part of JSON Schema (2020-12, MCP's default dialect) a tool's input needs. */
export interface JsonSchema {
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean;
  minProperties?: number;
  maxProperties?: number;
  items?: JsonSchema;
  enum?: string[];
  format?: string;
  minimum?: number;
  maximum?: number;
  default?: unknown;
  deprecated?: boolean;
  $ref?: string;
  $defs?: Record<string, JsonSchema>;
}

/** An MCP tool's input: always an object, one property per variable. */
export type ToolInputSchema = JsonSchema & { type: 'object'; properties: Record<string, JsonSchema> };

/** An operation whose variables cannot be described: a type the served schema lacks, or one that is not an input type. */
export class UnknownVariableTypeError extends Error {
  override readonly name = 'UnknownVariableTypeError';
}

const INT_RANGE = { minimum: -(2 ** 31), maximum: 2 ** 31 - 1 };

/** GraphQL's own scalars. */
const BUILT_IN: ReadonlyMap<GraphQLScalarType, JsonSchema> = new Map<GraphQLScalarType, JsonSchema>([
  [GraphQLInt, { type: 'integer', ...INT_RANGE }],
  [GraphQLFloat, { type: 'number' }],
  [GraphQLString, { type: 'string' }],
  [GraphQLBoolean, { type: 'boolean' }],
  // An ID is serialised as a string; graphql-js also accepts an integer, which an agent has no reason to send.
  [GraphQLID, { type: 'string' }],
]);

/**
 * Custom scalars whose JSON form their name says, as the subgraphs define them (`DateTime`: ISO 8601 text, `URL`:
 * absolute URL text). Any other custom scalar is left open (`JSON` included), with its description.
 */
const BY_SCALAR_NAME: Readonly<Record<string, JsonSchema>> = {
  DateTime: { type: 'string', format: 'date-time' },
  Date: { type: 'string', format: 'date' },
  URL: { type: 'string', format: 'uri' },
};

const described = (schema: JsonSchema, description: string | null | undefined): JsonSchema =>
  description ? { ...schema, description } : schema;

/** Input object types that refer to themselves (directly or not) go into `$defs` and are referred to by `$ref`. */
class Definitions {
  readonly defs: Record<string, JsonSchema> = {};
  private readonly expanding: GraphQLInputObjectType[] = [];
  private readonly recursive = new Set<string>();

  scalar(type: GraphQLScalarType): JsonSchema {
    // A built-in's description says what its JSON type already does.
    const builtIn = BUILT_IN.get(type);
    if (builtIn) return builtIn;
    const known = BY_SCALAR_NAME[type.name];
    return described(known ?? {}, type.description ?? (known ? undefined : `GraphQL scalar ${type.name}`));
  }

  /** A nullable input is one an agent may leave out: it is not made nullable in the schema, which keeps it simple to fill. */
  of(type: GraphQLInputType): JsonSchema {
    const named = isNonNullType(type) ? type.ofType : type;
    if (isListType(named)) return { type: 'array', items: this.of(named.ofType) };
    if (isScalarType(named)) return this.scalar(named);
    if (isEnumType(named)) return described({ type: 'string', enum: named.getValues().map((value) => value.name) }, named.description);
    if (isInputObjectType(named)) return this.inputObject(named);
    throw new UnknownVariableTypeError(`not an input type: ${String(type)}`);
  }

  private inputObject(type: GraphQLInputObjectType): JsonSchema {
    if (this.expanding.includes(type) || this.recursive.has(type.name)) {
      this.recursive.add(type.name);
      return { $ref: `#/$defs/${type.name}` };
    }
    this.expanding.push(type);
    const properties: Record<string, JsonSchema> = {};
    const required: string[] = [];
    for (const field of Object.values(type.getFields())) {
      let property = described(this.of(field.type), field.description);
      if (field.defaultValue !== undefined) property = { ...property, default: field.defaultValue };
      if (field.deprecationReason) property = { ...property, deprecated: true };
      properties[field.name] = property;
      if (isNonNullType(field.type) && field.defaultValue === undefined) required.push(field.name);
    }
    this.expanding.pop();
    const schema: JsonSchema = described(
      {
        type: 'object',
        properties,
        ...(required.length > 0 ? { required } : {}),
        additionalProperties: false,
        // @oneOf: exactly one field.
        ...(type.isOneOf ? { minProperties: 1, maxProperties: 1 } : {}),
      },
      type.description,
    );
    if (!this.recursive.has(type.name)) return schema;
    this.defs[type.name] = schema;
    return { $ref: `#/$defs/${type.name}` };
  }
}

const namedTypeOf = (type: TypeNode): string => (type.kind === Kind.NAMED_TYPE ? type.name.value : namedTypeOf(type.type));

/**
 * The JSON Schema of an operation's variables: one property per variable, required when its type is non-null and it
 * has no default; scalars, enums, input objects (their fields' descriptions and defaults), lists. Throws
 * UnknownVariableTypeError when a variable's type is not an input type of `schema`.
 */
export function variablesInputSchema(operation: OperationDefinitionNode, schema: GraphQLSchema): ToolInputSchema {
  const definitions = new Definitions();
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const definition of operation.variableDefinitions ?? []) {
    const name = definition.variable.name.value;
    const type = typeFromAST(schema, definition.type) as GraphQLInputType | undefined;
    if (!type) throw new UnknownVariableTypeError(`variable $${name}: the schema has no type ${namedTypeOf(definition.type)}`);
    let property = definitions.of(type);
    if (definition.defaultValue) property = { ...property, default: valueFromASTUntyped(definition.defaultValue) };
    properties[name] = property;
    if (isNonNullType(type) && !definition.defaultValue) required.push(name);
  }
  return {
    type: 'object',
    properties,
    ...(required.length > 0 ? { required } : {}),
    additionalProperties: false,
    ...(Object.keys(definitions.defs).length > 0 ? { $defs: definitions.defs } : {}),
  };
}
