// A trusted operation's variables as an MCP tool's input JSON Schema: each kind of GraphQL input type, what is required,
// defaults, descriptions, recursion, and a variable the schema cannot describe.
import { buildSchema, getOperationAST, parse, type OperationDefinitionNode } from 'graphql';
import { describe, expect, it } from 'vitest';
import { UnknownVariableTypeError, variablesInputSchema } from '../../src/mcp/input-schema.js';

const schema = buildSchema(`
  "An instant, ISO 8601."
  scalar DateTime
  scalar URL
  "Anything JSON."
  scalar JSON
  scalar Money

  "Where an order is."
  enum Status { PENDING SHIPPED }

  "What to look for."
  input Filter {
    "Part of the name."
    name: String
    status: Status = PENDING
    ids: [ID!]
    since: DateTime!
    old: Boolean @deprecated(reason: "no longer read")
    and: [Filter!]
  }

  input Line { productId: ID!, quantity: Int! = 1 }
  input Order { lines: [Line!]!, note: String, site: URL, extra: JSON, tip: Money }
  input Pick @oneOf { id: ID, email: String }

  type Query { find(filter: Filter, first: Int, pick: Pick): [String] }
  type Mutation { place(order: Order!, scale: Float!, exact: Boolean): String }
`);

const operation = (body: string): OperationDefinitionNode => getOperationAST(parse(body))!;

describe('the input JSON Schema of a trusted operation', () => {
  it('has one property per variable, required when non-null without a default', () => {
    const input = variablesInputSchema(operation('query Q($a: Int!, $b: String, $c: Float! = 1.5, $d: Boolean!, $e: ID) { find { __typename } }'), schema);
    expect(input).toEqual({
      type: 'object',
      properties: {
        a: { type: 'integer', minimum: -2147483648, maximum: 2147483647 },
        b: { type: 'string' },
        c: { type: 'number', default: 1.5 },
        d: { type: 'boolean' },
        e: { type: 'string' },
      },
      required: ['a', 'd'],
      additionalProperties: false,
    });
  });

  it('is an empty object for an operation without variables', () => {
    expect(variablesInputSchema(operation('{ find }'), schema)).toEqual({ type: 'object', properties: {}, additionalProperties: false });
  });

  it('describes lists, enums with their values, and custom scalars by what their names say', () => {
    const input = variablesInputSchema(operation('query Q($ids: [ID!]!, $matrix: [[Int]], $status: Status, $at: DateTime, $site: URL, $any: JSON, $cash: Money) { find }'), schema);
    expect(input.properties).toEqual({
      ids: { type: 'array', items: { type: 'string' } },
      matrix: { type: 'array', items: { type: 'array', items: { type: 'integer', minimum: -2147483648, maximum: 2147483647 } } },
      status: { type: 'string', enum: ['PENDING', 'SHIPPED'], description: 'Where an order is.' },
      at: { type: 'string', format: 'date-time', description: 'An instant, ISO 8601.' },
      site: { type: 'string', format: 'uri' },
      any: { description: 'Anything JSON.' },
      cash: { description: 'GraphQL scalar Money' },
    });
    expect(input.required).toEqual(['ids']);
  });

  it('spells out input objects: fields, their descriptions and defaults, required fields, deprecation', () => {
    const input = variablesInputSchema(operation('mutation M($order: Order!, $scale: Float! = 2) { place(order: $order, scale: $scale) }'), schema);
    expect(input.required).toEqual(['order']);
    expect(input.properties['order']).toEqual({
      type: 'object',
      properties: {
        lines: {
          type: 'array',
          items: {
            type: 'object',
            properties: { productId: { type: 'string' }, quantity: { type: 'integer', minimum: -2147483648, maximum: 2147483647, default: 1 } },
            required: ['productId'],
            additionalProperties: false,
          },
        },
        note: { type: 'string' },
        site: { type: 'string', format: 'uri' },
        extra: { description: 'Anything JSON.' },
        tip: { description: 'GraphQL scalar Money' },
      },
      required: ['lines'],
      additionalProperties: false,
    });
  });

  it('puts an input object that contains itself in $defs, referred to by $ref, with its field descriptions and defaults', () => {
    const input = variablesInputSchema(operation('query Q($filter: Filter, $again: Filter) { find(filter: $filter) }'), schema);
    expect(input.properties).toEqual({ filter: { $ref: '#/$defs/Filter' }, again: { $ref: '#/$defs/Filter' } });
    expect(input.$defs).toEqual({
      Filter: {
        type: 'object',
        description: 'What to look for.',
        properties: {
          name: { type: 'string', description: 'Part of the name.' },
          status: { type: 'string', enum: ['PENDING', 'SHIPPED'], description: 'Where an order is.', default: 'PENDING' },
          ids: { type: 'array', items: { type: 'string' } },
          since: { type: 'string', format: 'date-time', description: 'An instant, ISO 8601.' },
          old: { type: 'boolean', deprecated: true },
          and: { type: 'array', items: { $ref: '#/$defs/Filter' } },
        },
        required: ['since'],
        additionalProperties: false,
      },
    });
  });

  it('asks for exactly one field of a @oneOf input object', () => {
    const input = variablesInputSchema(operation('query Q($pick: Pick!) { find(pick: $pick) }'), schema);
    expect(input.properties['pick']).toMatchObject({ type: 'object', minProperties: 1, maxProperties: 1, properties: { id: { type: 'string' }, email: { type: 'string' } } });
    expect(input.properties['pick']).not.toHaveProperty('required');
  });

  it('takes a list default as written in the document', () => {
    const input = variablesInputSchema(operation('query Q($ids: [ID!] = ["a", "b"], $status: Status = SHIPPED) { find }'), schema);
    expect(input.properties['ids']).toEqual({ type: 'array', items: { type: 'string' }, default: ['a', 'b'] });
    expect(input.properties['status']).toMatchObject({ default: 'SHIPPED' });
  });

  it('refuses a variable whose type the schema lacks, or that is not an input type', () => {
    expect(() => variablesInputSchema(operation('query Q($x: [Gone!]) { find }'), schema)).toThrow(new UnknownVariableTypeError('variable $x: the schema has no type Gone'));
    expect(() => variablesInputSchema(operation('query Q($x: Query) { find }'), schema)).toThrow(UnknownVariableTypeError);
  });
});
