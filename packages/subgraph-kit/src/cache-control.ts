// Apollo Server's cache-control plugin, spared where its answer is known before execution. Installed as it is, it wraps
// every resolver of the schema and makes a cache policy per resolved field: a fifth of the orders subgraph's request
// pipeline under the benchmark's (d), for a header that reads `no-store` on nearly every call the gateway makes.
import type { ApolloServerPlugin, BaseContext, GraphQLRequestContextExecutionDidStart } from '@apollo/server';
import { ApolloServerPluginCacheControl } from '@apollo/server/plugin/cacheControl';
import { ApolloServerPluginCacheControlDisabled } from '@apollo/server/plugin/disabled';
import { getNamedType, isCompositeType, Kind, type ConstDirectiveNode, type GraphQLField, type GraphQLNamedType, type OperationDefinitionNode } from 'graphql';

/** A @cacheControl directive's maxAge, or whether it inherits its parent's; undefined where there is none. */
function hintOf(directives: readonly ConstDirectiveNode[] | undefined): { maxAge?: number; inherits: boolean } | undefined {
  const directive = directives?.find((candidate) => candidate.name.value === 'cacheControl');
  if (!directive) return undefined;
  const argument = (name: string) => directive.arguments?.find((candidate) => candidate.name.value === name)?.value;
  const inherit = argument('inheritMaxAge');
  if (inherit?.kind === Kind.BOOLEAN && inherit.value) return { inherits: true };
  const maxAge = argument('maxAge');
  return maxAge?.kind === Kind.INT ? { maxAge: Number.parseInt(maxAge.value, 10), inherits: false } : { inherits: false };
}

const typeHint = (type: GraphQLNamedType) =>
  [type.astNode, ...(type.extensionASTNodes ?? [])].map((node) => hintOf(node?.directives)).find((hint) => hint !== undefined);

/**
 * The maxAge Apollo's plugin gives a root field that no resolver hints at dynamically (none of ours does): the field's
 * own hint, else its type's, else 0 (Apollo's defaultMaxAge for root fields).
 */
function rootFieldMaxAge(field: GraphQLField<unknown, unknown>): number {
  const own = hintOf(field.astNode?.directives);
  if (own && !own.inherits && own.maxAge !== undefined) return own.maxAge;
  const type = getNamedType(field.type);
  return (isCompositeType(type) ? typeHint(type)?.maxAge : undefined) ?? 0;
}

/**
 * Whether the operation's response is uncacheable whatever its data: a root field it always resolves (no @skip or
 * @include) has maxAge 0, and a policy is only ever narrowed. `_entities`, `user(id)`, `order(id)` and every mutation
 * of ours are. Anything this does not read (fragments at the root, introspection) counts as not known.
 */
function uncacheableAtRoot(context: GraphQLRequestContextExecutionDidStart<BaseContext>): boolean {
  const { operation, schema } = context;
  const root = schema.getRootType(operation.operation);
  if (!root) return false;
  return operation.selectionSet.selections.some((selection) => {
    if (selection.kind !== Kind.FIELD || selection.directives?.length) return false;
    const field = root.getFields()[selection.name.value];
    return field !== undefined && rootFieldMaxAge(field) === 0;
  });
}

/**
 * Apollo Server's cache-control plugin, with its defaults, skipped for an operation that uncacheableAtRoot shows can
 * only be answered `Cache-Control: no-store`: that operation's policy is narrowed to maxAge 0 at once, and the
 * plugin's own willSendResponse writes the header as before. Every other operation goes through the plugin as it is.
 * The two plugins go together: Apollo Server adds its own cache-control plugin unless the disabled one is given.
 */
export function cacheControlPlugins(): ApolloServerPlugin[] {
  const apollo = ApolloServerPluginCacheControl();
  const known = new WeakMap<OperationDefinitionNode, boolean>();
  const plugin: ApolloServerPlugin = {
    async serverWillStart(service) {
      await apollo.serverWillStart?.(service);
    },
    async requestDidStart(requestContext) {
      const listener = await apollo.requestDidStart?.(requestContext);
      if (!listener) return undefined;
      return {
        async executionDidStart(context) {
          let uncacheable = known.get(context.operation);
          if (uncacheable === undefined) known.set(context.operation, (uncacheable = uncacheableAtRoot(context)));
          if (!uncacheable) return listener.executionDidStart?.(context);
          context.overallCachePolicy.restrict({ maxAge: 0 });
          return undefined;
        },
        async willSendResponse(context) {
          await listener.willSendResponse?.(context);
        },
      };
    },
  };
  return [ApolloServerPluginCacheControlDisabled(), plugin];
}
