// The trusted documents of the manifest as MCP tools, against the schema being served: built again when either changes.
import { specifiedRules, KnownDirectivesRule, TokenKind, getOperationAST, parse, validate, type GraphQLSchema, type OperationDefinitionNode } from 'graphql';
import type { FieldRequirement } from '../security/authorization.js';
import type { ManifestEntry, ManifestOperations } from '../persisted-queries/manifest.js';
import { variablesInputSchema, type ToolInputSchema } from './input-schema.js';
import { documentRequirements } from './requirements.js';

export interface TrustedTool {
  /** The operation's name: the tool's name. */
  name: string;
  /** The manifest id a call sends as its `documentId`. */
  id: string;
  type: 'query' | 'mutation';
  description: string;
  inputSchema: ToolInputSchema;
  /** What its fields ask of a caller (requirements.ts). */
  requirements: readonly FieldRequirement[];
}

/** A manifest entry that is not offered, and why (logged once per manifest and schema). */
export interface SkippedEntry {
  id: string;
  reason: string;
}

export interface Toolset {
  tools: ReadonlyMap<string, TrustedTool>;
  skipped: readonly SkippedEntry[];
}

/**
 * The `#` comment lines right above the operation in its body (graphql-js keeps comments in its token list), joined:
 * the description of an operation whose manifest entry has none.
 */
function leadingComment(operation: OperationDefinitionNode): string | undefined {
  const lines: string[] = [];
  for (let token = operation.loc?.startToken.prev; token && token.kind === TokenKind.COMMENT; token = token.prev) lines.unshift((token.value ?? '').trim());
  const text = lines.join('\n').trim();
  return text || undefined;
}

// Unknown directives are the planner's and the runtime's to judge (the schema the planner serves lacks `@defer`, which
// the runtime adds at validation): the rest of graphql-js's rules decide whether a document still fits the schema.
const RULES = specifiedRules.filter((rule) => rule !== KnownDirectivesRule);

type Built = { tool: TrustedTool } | { reason: string };

function toolOf(entry: ManifestEntry, schema: GraphQLSchema): Built {
  const document = parse(entry.body);
  const operation = getOperationAST(document, entry.name);
  if (!operation) return { reason: entry.name ? `the body has no operation ${entry.name}` : 'the body has several operations and the entry names none' };
  const name = operation.name?.value;
  if (!name) return { reason: 'the operation has no name' };
  if (operation.operation === 'subscription') return { reason: 'a subscription is not offered as a tool (a call has one answer)' };
  const errors = validate(schema, document, RULES);
  if (errors.length > 0) return { reason: `it does not fit the schema being served: ${errors[0]!.message}` };
  let inputSchema: ToolInputSchema;
  try {
    inputSchema = variablesInputSchema(operation, schema);
  } catch (error) {
    return { reason: error instanceof Error ? error.message : String(error) };
  }
  return {
    tool: {
      name,
      id: entry.id,
      type: operation.operation,
      description: entry.description ?? leadingComment(operation) ?? `The trusted ${operation.operation} ${name}.`,
      inputSchema,
      requirements: documentRequirements(schema, document, operation),
    },
  };
}

/** Every tool of `manifest` on `schema`, by name; the first entry of a name wins (ids that name the same body agree). */
export function buildTools(manifest: ManifestOperations, schema: GraphQLSchema): Toolset {
  const tools = new Map<string, TrustedTool>();
  const skipped: SkippedEntry[] = [];
  for (const entry of manifest.entries) {
    const built = toolOf(entry, schema);
    if ('reason' in built) skipped.push({ id: entry.id, reason: built.reason });
    else if (tools.has(built.tool.name)) {
      if (manifest.byId.get(tools.get(built.tool.name)!.id) !== entry.body) skipped.push({ id: entry.id, reason: `another entry already offers ${built.tool.name}` });
    } else tools.set(built.tool.name, built.tool);
  }
  return { tools, skipped };
}

/** Tools built once per manifest and schema objects: each reload of either brings new objects, and a new build. */
export function toolsCache(onBuilt: (toolset: Toolset) => void): (manifest: ManifestOperations, schema: GraphQLSchema) => Toolset {
  const bySchema = new WeakMap<GraphQLSchema, WeakMap<ManifestOperations, Toolset>>();
  return (manifest, schema) => {
    let byManifest = bySchema.get(schema);
    if (!byManifest) bySchema.set(schema, (byManifest = new WeakMap()));
    let toolset = byManifest.get(manifest);
    if (!toolset) {
      byManifest.set(manifest, (toolset = buildTools(manifest, schema)));
      onBuilt(toolset);
    }
    return toolset;
  };
}
