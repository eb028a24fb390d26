// Who may introspect the schema (INTROSPECTION=public|admin|off, `admin` by default in production; a refused request
// fails validation with FORBIDDEN, so it returns no schema data at all), and what introspection shows.
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';
import { GraphQLError, GraphQLSchema, Kind, execute, getOperationAST, type DocumentNode, type ValidationRule } from 'graphql';
import { ErrorCode, isAdmin } from '@ordergraph/core';
import type { ViewerContext } from './auth.js';

export const INTROSPECTION_MODES = ['public', 'admin', 'off'] as const;
export type IntrospectionMode = (typeof INTROSPECTION_MODES)[number];

/** The meta-fields that read the schema (`__typename` does not). */
const INTROSPECTION_FIELDS = new Set(['__schema', '__type']);

/**
 * Reports each introspection field as FORBIDDEN; graphql-js's NoSchemaIntrospectionCustomRule reports a validation
 * failure instead, and once per nested field. Named, because yoga caches validation results by the rules' names.
 */
function refusal(name: string, message: string): ValidationRule {
  const rule: ValidationRule = (context) => ({
    Field(node) {
      if (!INTROSPECTION_FIELDS.has(node.name.value)) return;
      context.reportError(
        new GraphQLError(message, { nodes: node, extensions: { code: ErrorCode.FORBIDDEN, http: { spec: true, status: 403 } } }),
      );
    },
  });
  return Object.defineProperty(rule, 'name', { value: name });
}

const REFUSALS: Readonly<Record<Exclude<IntrospectionMode, 'public'>, ValidationRule>> = {
  admin: refusal('IntrospectionForAdministratorsOnly', 'Introspection is restricted to administrators'),
  off: refusal('IntrospectionDisabled', 'Introspection is disabled'),
};

/** The viewer is known at validation: authentication puts it on the request's context before parsing. */
export function useIntrospectionPolicy(mode: IntrospectionMode): GatewayPlugin<ViewerContext> {
  if (mode === 'public') return {};
  return {
    onValidate({ context, addValidationRule }) {
      if (mode === 'off' || !isAdmin(context.viewer ?? null)) addValidationRule(REFUSALS[mode]);
    },
  };
}

/**
 * Directives of federation's own specs, linked into the supergraph for the gateway to enforce or read (authorization,
 * demand control, composition): type-system directives no client operation can use.
 */
const FEDERATION_DIRECTIVES = new Set(['authenticated', 'requiresScopes', 'policy', 'cost', 'listSize', 'inaccessible', 'tag', 'link', 'context', 'fromContext']);
/** A type of a linked spec is named with the spec's prefix: `requiresScopes__Scope`, `policy__Policy`, `join__Graph`. */
const isSpecType = (name: string) => !name.startsWith('__') && name.includes('__');

const apiSchemas = new WeakMap<GraphQLSchema, GraphQLSchema>();

/** The schema as clients see it: without federation's directives and the types only they use. Made once per schema. */
function apiSchemaOf(schema: GraphQLSchema): GraphQLSchema {
  let api = apiSchemas.get(schema);
  if (!api) {
    const config = schema.toConfig();
    api = new GraphQLSchema({
      ...config,
      types: config.types.filter((type) => !isSpecType(type.name)),
      directives: config.directives.filter((directive) => !FEDERATION_DIRECTIVES.has(directive.name) && !isSpecType(directive.name)),
    });
    apiSchemas.set(schema, api);
  }
  return api;
}

/** An operation that reads only the schema: every root field `__schema`, `__type` or `__typename`, one of the first two. */
function readsOnlySchema(document: DocumentNode, operationName: string | null | undefined): boolean {
  const fields = getOperationAST(document, operationName)?.selectionSet.selections ?? [];
  const names = fields.map((selection) => (selection.kind === Kind.FIELD ? selection.name.value : ''));
  return names.some((name) => INTROSPECTION_FIELDS.has(name)) && names.every((name) => INTROSPECTION_FIELDS.has(name) || name === '__typename');
}

/**
 * Introspection answers from the API schema, as Apollo Router's does: the planners answer it from the supergraph's
 * schema, which still holds `@authenticated`, `@requiresScopes` (and its `requiresScopes__Scope` scalar), `@cost` and
 * `@listSize`, and lacks the `@defer` the gateway serves (the runtime adds it to the schema it validates with, not to
 * the planner's), so a client validating its documents against introspection refused `@defer`. Composed
 * directives meant for clients (`@cacheControl`) stay. graphql-js answers introspection from the schema alone.
 */
export function useApiSchemaIntrospection(): GatewayPlugin {
  return {
    onExecute({ args, setExecuteFn }) {
      if (!readsOnlySchema(args.document, args.operationName)) return;
      setExecuteFn((executed) => execute({ ...executed, schema: apiSchemaOf(executed.schema) }));
    },
  };
}
