// Schemas to compare: a subgraph's SDL built as the subgraph serves it, and the API schema a deployed gateway exposes.
import { buildSubgraphSchema } from '@apollo/subgraph';
import { Kind, buildASTSchema, buildClientSchema, getIntrospectionQuery, parse, type GraphQLSchema, type IntrospectionQuery, type IntrospectionTypeRef } from 'graphql';

/**
 * A subgraph's schema from its SDL, with the federation directives and types it is served with. A schema file lacks
 * them; the `_service { sdl }` of @apollo/subgraph 2.15+ is the whole assembled document already (`_Service` included).
 */
export function subgraphSchema(sdl: string): GraphQLSchema {
  const document = parse(sdl);
  const assembled = document.definitions.some((definition) => definition.kind === Kind.OBJECT_TYPE_DEFINITION && definition.name.value === '_Service');
  return assembled ? buildASTSchema(document) : buildSubgraphSchema(document);
}

async function post<T>(url: string, query: string, token?: string): Promise<T> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query }),
  });
  const body = (await response.json().catch(() => ({}))) as { data?: T; errors?: { message: string }[] };
  if (!body.data) throw new Error(`${url} answered ${response.status}: ${body.errors?.map((error) => error.message).join('; ') ?? 'no data'}`);
  return body.data;
}

/** The SDL a running subgraph serves (the federation `_service { sdl }` field, as a registry or gateway reads it). */
export async function fetchSubgraphSdl(url: string): Promise<string> {
  return (await post<{ _service: { sdl: string } }>(url, '{ _service { sdl } }'))._service.sdl;
}

/** A type a Federation spec namespaces under its own name (`requiresScopes__Scope`): composition machinery. */
const isSpecType = (name: string) => /^[A-Za-z][A-Za-z0-9]*__[A-Za-z]/.test(name);

/**
 * The API schema a running gateway serves, by introspection (`token` for an admin where introspection is restricted).
 * Hive's runtime shows the scalars of the authorization specs' directive arguments (`requiresScopes__Scope`), which
 * no field uses and the composed API schema leaves out; they, and the directives using them, are not compared.
 */
export async function fetchApiSchema(url: string, token?: string): Promise<GraphQLSchema> {
  const { __schema: schema } = await post<IntrospectionQuery>(url, getIntrospectionQuery({ inputValueDeprecation: true }), token);
  const usesSpecType = (type: IntrospectionTypeRef): boolean =>
    'ofType' in type && type.ofType ? usesSpecType(type.ofType) : 'name' in type && isSpecType(type.name);
  return buildClientSchema({
    __schema: {
      ...schema,
      types: schema.types.filter((type) => !isSpecType(type.name)),
      directives: schema.directives.filter((directive) => !directive.args.some((argument) => usesSpecType(argument.type))),
    },
  });
}
