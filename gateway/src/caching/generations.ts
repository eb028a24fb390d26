// The generations both caches depend on (entity-store.ts keeps them): what a write bumps and what an entry or a
// response is checked against. One vocabulary, so that a write seen by one cache is seen by the other.
import { isAbstractType, isObjectType, type GraphQLNamedType, type GraphQLSchema } from 'graphql';

/**
 * An entity's entry (or a root field's that names its entity by ID) depends on its own generation, its type's purge
 * and `t:` of each type it holds; any other root field's answer on `r:` of each type it holds. A write bumps its
 * entities' own and `r:` of their types; `t:` too when its subgraph did not declare what it changed (then any list of
 * that type anywhere may have changed).
 */
export const entityGeneration = (type: string, id: string) => `e:${type}:${id}`;
export const purgeGeneration = (type: string) => `p:${type}`;
export const typeGeneration = (type: string) => `t:${type}`;
export const rootGeneration = (type: string) => `r:${type}`;
/**
 * What root fields answer without naming an object (a scalar, an enum, a list of them: a count, a flag): no write can
 * be told to change it or not, so every mutation sets it, and every entry or response holding such an answer depends
 * on it.
 */
export const VALUES_GENERATION = 'v:';

/** An object a response holds: its type (or the interface or union it stands in), and its ID when it was selected. */
export interface HeldObject {
  typename: string;
  id?: string | number | undefined;
}

/** Every object type that may stand where `type` is: itself, an interface's or union's members, none for a scalar. */
export const possibleObjectTypes = (schema: GraphQLSchema, type: GraphQLNamedType): string[] =>
  isObjectType(type) ? [type.name] : isAbstractType(type) ? schema.getPossibleTypes(type).map(({ name }) => name) : [];

/** possibleObjectTypes by name, none for a root type (a name the schema lacks stands for itself). */
export function objectTypesOf(schema: GraphQLSchema | undefined, typename: string): string[] {
  const type = schema?.getType(typename);
  if (!schema || !type) return [typename];
  if (type === schema.getQueryType() || type === schema.getMutationType() || type === schema.getSubscriptionType()) return [];
  return possibleObjectTypes(schema, type);
}

/**
 * The generations a whole response depends on, as an entity cache entry of the same data would: each object it holds
 * by its own generation (by `r:` of its type when its ID is unknown: any write of the type), `p:` and `t:` of every type
 * it holds, `r:` of the types a root field returns unless it named its entity by ID (`listed`: a list or a search
 * may gain or lose members with any write of the type), and VALUES_GENERATION when a root field answers no object
 * (`values`).
 */
export function responseDependencies(schema: GraphQLSchema | undefined, held: Iterable<HeldObject>, listed: Iterable<string>, values = false): string[] {
  const generations = new Set<string>(values ? [VALUES_GENERATION] : []);
  const holdType = (type: string) => generations.add(purgeGeneration(type)).add(typeGeneration(type));
  for (const { typename, id } of held) {
    const identified = id !== undefined && id !== null && id !== '';
    for (const type of objectTypesOf(schema, typename)) {
      holdType(type);
      generations.add(identified ? entityGeneration(type, String(id)) : rootGeneration(type));
    }
  }
  for (const typename of listed) {
    for (const type of objectTypesOf(schema, typename)) {
      holdType(type);
      generations.add(rootGeneration(type));
    }
  }
  return [...generations];
}
