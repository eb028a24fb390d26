// What a trusted document asks of its caller: the `@authenticated` and `@requiresScopes` of every field it selects, read
// as security/authorization.ts enforces them (@envelop/generic-auth: the field's directives and its parent type's), so
// that a tool is offered to exactly the callers whose every field would be allowed.
import type { Viewer } from '@ordergraph/core';
import { getDirectiveExtensions } from '@graphql-tools/utils';
import {
  Kind,
  TypeInfo,
  getNamedType,
  isInterfaceType,
  isIntrospectionType,
  isObjectType,
  visit,
  visitWithTypeInfo,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql';
import { refusalFor, type FieldRequirement } from '../security/authorization.js';

/** The operation and every fragment it spreads, however deep: what executing it selects. */
function reachableDefinitions(document: DocumentNode, operation: OperationDefinitionNode): (OperationDefinitionNode | FragmentDefinitionNode)[] {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  const reached = new Map<string, FragmentDefinitionNode>();
  const pending: (OperationDefinitionNode | FragmentDefinitionNode)[] = [operation];
  while (pending.length > 0) {
    visit(pending.pop()!, {
      FragmentSpread(node) {
        const fragment = fragments.get(node.name.value);
        if (fragment && !reached.has(fragment.name.value)) {
          reached.set(fragment.name.value, fragment);
          pending.push(fragment);
        }
      },
    });
  }
  return [operation, ...reached.values()];
}

/**
 * The distinct requirements of the fields `operation` selects (its fragments included), on `schema`. Fields under
 * `@skip` or `@include` count as selected: a tool is offered only to callers who may read all it can select. Unions
 * add none of their own (they have only `__typename`), as in the library.
 */
export function documentRequirements(schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode): FieldRequirement[] {
  const typeInfo = new TypeInfo(schema);
  const requirements = new Map<string, FieldRequirement>();
  const selected: DocumentNode = { kind: Kind.DOCUMENT, definitions: reachableDefinitions(document, operation) };
  visit(
    selected,
    visitWithTypeInfo(typeInfo, {
      Field(node) {
        const parent = typeInfo.getParentType();
        if (!parent || isIntrospectionType(getNamedType(parent)) || !(isObjectType(parent) || isInterfaceType(parent))) return;
        const field = parent.getFields()[node.name.value];
        if (!field) return;
        const onType = getDirectiveExtensions(parent, schema);
        const onField = getDirectiveExtensions(field, schema);
        const scopesOf = (directives: typeof onType) => (directives['requiresScopes']?.[0]?.['scopes'] ?? []) as string[][];
        const requirement: FieldRequirement = {
          authenticated: onType['authenticated'] !== undefined || onField['authenticated'] !== undefined,
          scopes: [...scopesOf(onType), ...scopesOf(onField)],
        };
        if (!requirement.authenticated && requirement.scopes.length === 0) return;
        requirements.set(JSON.stringify(requirement), requirement);
      },
    }),
  );
  return [...requirements.values()];
}

/** Whether `viewer` may read every field of a document with these requirements. */
export const allows = (viewer: Viewer, requirements: readonly FieldRequirement[]): boolean =>
  requirements.every((requirement) => refusalFor(viewer, requirement) === undefined);

/** The scopes that would let a caller through, for the refusal's message: each requirement's alternatives. */
export function describeRequirements(requirements: readonly FieldRequirement[]): string {
  const parts = new Set<string>();
  for (const { authenticated, scopes } of requirements) {
    if (scopes.length > 0) parts.add(`scopes ${scopes.map((all) => all.join('+')).join(' or ')}`);
    else if (authenticated) parts.add('a signed-in caller');
  }
  return [...parts].join(', ') || 'nothing';
}
