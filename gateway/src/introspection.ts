// Who may introspect the schema: INTROSPECTION=public|admin|off, `admin` by default in production.
// A refused introspection request fails validation with FORBIDDEN, so it returns no schema data at all.
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';
import { GraphQLError, type ValidationRule } from 'graphql';
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
