// schema:check: the proposed subgraph schemas against the deployed baseline, plus composition of the proposed set.
import { buildClientSchema, buildSchema, introspectionFromSchema, type GraphQLSchema } from 'graphql';
import { CompositionError, compose, type SubgraphSource } from '@ordergraph/composition';
import { subgraphSchema } from './schema.js';
import { classifyChanges, type ClassifiedChange } from './versioning.js';

export interface SchemaComparison {
  /** A subgraph's name, or "API schema" when compared with a running gateway. */
  name: string;
  /** False for a subgraph that has no baseline yet (a new subgraph: everything in it is an addition). */
  hasBaseline: boolean;
  changes: ClassifiedChange[];
}

export interface CheckResult {
  comparisons: SchemaComparison[];
  /** Composition errors of the proposed subgraphs; empty when they compose. */
  compositionErrors: string[];
  breaking: number;
}

function composition(proposed: SubgraphSource[]): { publicSdl?: string; compositionErrors: string[] } {
  try {
    return { publicSdl: compose(proposed).publicSdl, compositionErrors: [] };
  } catch (error) {
    if (!(error instanceof CompositionError)) throw error;
    return { compositionErrors: error.errors.map((e) => e.message) };
  }
}

const result = (comparisons: SchemaComparison[], compositionErrors: string[]): CheckResult => ({
  comparisons,
  compositionErrors,
  breaking: comparisons.flatMap((comparison) => comparison.changes).filter((change) => change.impact === 'breaking').length,
});

/** Each proposed subgraph against its baseline SDL (by subgraph name). */
export async function checkSubgraphs(proposed: SubgraphSource[], baselines: Record<string, string>): Promise<CheckResult> {
  const comparisons: SchemaComparison[] = [];
  for (const subgraph of proposed) {
    const baseline = baselines[subgraph.name];
    comparisons.push({
      name: subgraph.name,
      hasBaseline: baseline !== undefined,
      changes: baseline === undefined ? [] : await classifyChanges(subgraphSchema(baseline), subgraphSchema(subgraph.typeDefs)),
    });
  }
  const names = new Set(proposed.map((subgraph) => subgraph.name));
  for (const name of Object.keys(baselines).filter((baselined) => !names.has(baselined))) {
    comparisons.push({
      name,
      hasBaseline: true,
      changes: [
        {
          kind: 'Remove subgraph',
          impact: 'breaking',
          path: name,
          message: `Subgraph '${name}' is in the baseline but no longer in supergraph.yaml; every field only it served is removed`,
          hint: 'deprecate its fields for a release first, or publish the removal deliberately (schema:publish --allow-breaking)',
        },
      ],
    });
  }
  return result(comparisons, composition(proposed).compositionErrors);
}

/** The API schema the proposed subgraphs compose to, against the one a running gateway serves. */
export async function checkApiSchema(proposed: SubgraphSource[], deployed: GraphQLSchema): Promise<CheckResult> {
  const { publicSdl, compositionErrors } = composition(proposed);
  // Through introspection, as the deployed schema came: introspection shows no applied directives (@cacheControl),
  // so comparing the composed SDL directly would report them as changes.
  const proposedApi = publicSdl === undefined ? undefined : buildClientSchema(introspectionFromSchema(buildSchema(publicSdl)));
  const changes = proposedApi === undefined ? [] : await classifyChanges(deployed, proposedApi);
  return result([{ name: 'API schema', hasBaseline: true, changes }], compositionErrors);
}
