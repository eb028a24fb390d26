// schema:check: the proposed subgraph schemas against the deployed baseline, plus composition of the proposed set,
// and, given the operations clients send, which of them the change breaks.
import { buildClientSchema, buildSchema, introspectionFromSchema, type GraphQLSchema } from 'graphql';
import { CompositionError, compose, type SubgraphSource } from '@ordergraph/composition';
import { checkOperations, type KnownOperation, type OperationsCheck } from './operations.js';
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
  /** With known operations: which of them the change breaks, and whether unused breaking changes may pass. */
  operations?: OperationsCheck & { allowUnusedBreaking: boolean };
}

/** The operations clients send, and whether a breaking change none of them touches may pass (schema:check's flag). */
export interface UsageOptions {
  operations: KnownOperation[];
  allowUnusedBreaking: boolean;
}

/** The API schema clients see, from a composed supergraph's public SDL. */
const apiSchema = (publicSdl: string) => buildSchema(publicSdl);

function composition(proposed: SubgraphSource[]): { publicSdl?: string; compositionErrors: string[] } {
  try {
    return { publicSdl: compose(proposed).publicSdl, compositionErrors: [] };
  } catch (error) {
    if (!(error instanceof CompositionError)) throw error;
    return { compositionErrors: error.errors.map((e) => e.message) };
  }
}

function result(
  comparisons: SchemaComparison[],
  compositionErrors: string[],
  usage?: UsageOptions & { proposed: GraphQLSchema | undefined; deployed: GraphQLSchema | undefined },
): CheckResult {
  const changes = comparisons.flatMap((comparison) => comparison.changes);
  const checked: CheckResult = { comparisons, compositionErrors, breaking: changes.filter((change) => change.impact === 'breaking').length };
  // Operations are validated against the proposed API schema; without one (no composition) that failure is the verdict.
  if (usage?.proposed) {
    checked.operations = { ...checkOperations(usage.operations, usage.proposed, usage.deployed, changes), allowUnusedBreaking: usage.allowUnusedBreaking };
  }
  return checked;
}

/** The API schema the baseline subgraphs compose to, to read what known operations use today; undefined if they do not. */
function deployedApi(proposed: SubgraphSource[], baselines: Record<string, string>): GraphQLSchema | undefined {
  const sources = Object.entries(baselines).map(([name, typeDefs]) => ({
    name,
    url: proposed.find((subgraph) => subgraph.name === name)?.url ?? `http://${name}.invalid/graphql`,
    schemaPath: `${name}.graphql`,
    typeDefs,
  }));
  const { publicSdl } = composition(sources);
  return publicSdl === undefined ? undefined : apiSchema(publicSdl);
}

/** Each proposed subgraph against its baseline SDL (by subgraph name). */
export async function checkSubgraphs(proposed: SubgraphSource[], baselines: Record<string, string>, usage?: UsageOptions): Promise<CheckResult> {
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
  const { publicSdl, compositionErrors } = composition(proposed);
  if (!usage) return result(comparisons, compositionErrors);
  return result(comparisons, compositionErrors, {
    ...usage,
    proposed: publicSdl === undefined ? undefined : apiSchema(publicSdl),
    deployed: deployedApi(proposed, baselines),
  });
}

/** The API schema the proposed subgraphs compose to, against the one a running gateway serves. */
export async function checkApiSchema(proposed: SubgraphSource[], deployed: GraphQLSchema, usage?: UsageOptions): Promise<CheckResult> {
  const { publicSdl, compositionErrors } = composition(proposed);
  // Through introspection, as the deployed schema came: introspection shows no applied directives (@cacheControl),
  // so comparing the composed SDL directly would report them as changes.
  const proposedApi = publicSdl === undefined ? undefined : buildClientSchema(introspectionFromSchema(apiSchema(publicSdl)));
  const changes = proposedApi === undefined ? [] : await classifyChanges(deployed, proposedApi);
  return result([{ name: 'API schema', hasBaseline: true, changes }], compositionErrors, usage && { ...usage, proposed: proposedApi, deployed });
}
