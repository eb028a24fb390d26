// The operations clients are known to send (a trusted-documents manifest, a folder of .graphql documents, or a folder
// with one such folder per client), and which of them, and so which clients, a proposed schema change breaks.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import {
  Kind,
  TypeInfo,
  concatAST,
  getNamedType,
  isEnumType,
  isInputObjectType,
  parse,
  separateOperations,
  validate,
  visit,
  visitWithTypeInfo,
  type DocumentNode,
  type GraphQLInputType,
  type GraphQLNamedType,
  type GraphQLSchema,
} from 'graphql';
import type { ClassifiedChange } from './versioning.js';

export interface KnownOperation {
  /** The manifest's id, or `<file>#<name>` for a document in a folder. */
  id: string;
  name: string;
  document: DocumentNode;
  /** The clients that send it (a manifest entry's `clientName`, the client folder it sits in); empty: not said. */
  clients: string[];
}

export interface BrokenOperation {
  id: string;
  name: string;
  clients: string[];
  /** Why: the validation errors against the proposed schema, then each breaking change the operation touches. */
  reasons: string[];
}

const DOCUMENT_FILE = /\.(graphql|gql)$/;

function parseNamed(body: string, where: string): DocumentNode {
  try {
    return parse(body, { noLocation: true });
  } catch (error) {
    throw new Error(`${where} does not parse: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}

/** An Apollo persisted-query manifest's operations (any id). */
function fromManifest(path: string): KnownOperation[] {
  let manifest: unknown;
  try {
    manifest = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new Error(`${path} is not JSON: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  const { format, version, operations } = (manifest ?? {}) as { format?: unknown; version?: unknown; operations?: unknown };
  if (format !== 'apollo-persisted-query-manifest' || version !== 1 || !Array.isArray(operations)) {
    throw new Error(`${path} is not an Apollo persisted-query manifest (format "apollo-persisted-query-manifest", version 1, operations)`);
  }
  // Apollo's per-client manifests list an operation once per client that sends it: one known operation, its clients together.
  const byId = new Map<string, KnownOperation>();
  operations.forEach((entry: unknown, index) => {
    const { id, name, body, clientName } = (entry ?? {}) as { id?: unknown; name?: unknown; body?: unknown; clientName?: unknown };
    if (typeof id !== 'string' || typeof body !== 'string') throw new Error(`${path}: operation ${index} lacks a string id or body`);
    const clients = typeof clientName === 'string' && clientName ? [clientName] : [];
    const known = byId.get(id);
    if (known) known.clients = [...new Set([...known.clients, ...clients])];
    else byId.set(id, { id, name: typeof name === 'string' ? name : id, document: parseNamed(body, `${path}: operation ${id}`), clients });
  });
  return [...byId.values()];
}

/** Every operation of the .graphql documents under a folder, each with the fragments it spreads from any of them. */
function fromFolder(folder: string, client?: string): KnownOperation[] {
  const files = (readdirSync(folder, { recursive: true }) as string[]).filter((file) => DOCUMENT_FILE.test(file)).sort();
  const fileOf = new Map<string, string>();
  const documents = files.map((file) => {
    const document = parseNamed(readFileSync(join(folder, file), 'utf8'), join(folder, file));
    for (const definition of document.definitions) {
      if (definition.kind !== Kind.OPERATION_DEFINITION) continue;
      if (!definition.name) throw new Error(`${join(folder, file)}: every operation needs a name`);
      const known = fileOf.get(definition.name.value);
      if (known) throw new Error(`operation ${definition.name.value} is defined twice: in ${known} and ${file}`);
      fileOf.set(definition.name.value, file);
    }
    return document;
  });
  if (documents.length === 0) throw new Error(`${folder} holds no .graphql documents`);
  return Object.entries(separateOperations(concatAST(documents))).map(([name, document]) => ({
    id: `${relative(process.cwd(), join(folder, fileOf.get(name)!)) || fileOf.get(name)!}#${name}`,
    name,
    document,
    clients: client === undefined ? [] : [client],
  }));
}

/**
 * The operations of a folder holding one folder per client, named for it (`clients/web/`, `clients/ios/`), each read
 * as a folder of documents (operation names unique within a client); a manifest (`.json`) there is that client's too.
 */
export function readClientOperations(folder: string): KnownOperation[] {
  let entries: string[];
  try {
    entries = readdirSync(folder).sort();
  } catch {
    throw new Error(`--operations-by-client: ${folder} is not a folder`);
  }
  const clients = entries.filter((entry) => statSync(join(folder, entry)).isDirectory() || entry.endsWith('.json'));
  if (clients.length === 0) throw new Error(`--operations-by-client: ${folder} holds no folder (or manifest) per client`);
  return clients.flatMap((entry) => {
    const path = join(folder, entry);
    if (statSync(path).isDirectory()) return fromFolder(path, entry);
    const client = entry.replace(/\.json$/, '');
    return fromManifest(path).map((operation) => ({ ...operation, clients: operation.clients.length ? operation.clients : [client] }));
  });
}

/** The operations of a manifest file (`.json`) or of the documents under a folder. */
export function readOperations(path: string): KnownOperation[] {
  let folder: boolean;
  try {
    folder = statSync(path).isDirectory();
  } catch {
    throw new Error(`--operations: ${path} does not exist`);
  }
  return folder ? fromFolder(path) : fromManifest(path);
}

/**
 * What an operation touches in a schema it is valid against: the fields it selects and the arguments it passes
 * (`Type.field`, `Type.field.argument`), and the input and enum types its values can carry (its variables' types,
 * everything they nest, and enums its fields return), whose every member the operation may send or receive.
 */
function usage(schema: GraphQLSchema, document: DocumentNode): { coordinates: Set<string>; valueTypes: Set<string> } {
  const coordinates = new Set<string>();
  const valueTypes = new Set<string>();
  const addValueType = (type: GraphQLNamedType | undefined) => {
    if (!type || valueTypes.has(type.name)) return;
    if (isEnumType(type)) valueTypes.add(type.name);
    if (isInputObjectType(type)) {
      valueTypes.add(type.name);
      for (const field of Object.values(type.getFields())) addValueType(getNamedType(field.type));
    }
  };
  const typeInfo = new TypeInfo(schema);
  visit(
    document,
    visitWithTypeInfo(typeInfo, {
      Field() {
        const parent = typeInfo.getParentType();
        const field = typeInfo.getFieldDef();
        if (!parent || !field) return;
        coordinates.add(`${parent.name}.${field.name}`);
        addValueType(getNamedType(field.type));
      },
      Argument() {
        const parent = typeInfo.getParentType();
        const field = typeInfo.getFieldDef();
        const argument = typeInfo.getArgument();
        if (!parent || !field || !argument) return;
        coordinates.add(`${parent.name}.${field.name}.${argument.name}`);
        addValueType(getNamedType(argument.type));
      },
      VariableDefinition() {
        addValueType(getNamedType(typeInfo.getInputType() as GraphQLInputType | undefined));
      },
    }),
  );
  return { coordinates, valueTypes };
}

function touches(change: ClassifiedChange, { coordinates, valueTypes }: ReturnType<typeof usage>): boolean {
  const [type = '', field, argument] = change.path.split('.');
  if (valueTypes.has(type)) return true;
  if (field === undefined) return [...coordinates].some((coordinate) => coordinate.startsWith(`${type}.`));
  return coordinates.has(`${type}.${field}`) || (argument !== undefined && coordinates.has(`${type}.${field}.${argument}`));
}

/** A breaking change, and the clients whose known operations use what it breaks. */
export interface AffectedClients {
  change: ClassifiedChange;
  /** The clients named, sorted; `operations` counts those of no client named too. */
  clients: string[];
  operations: number;
  /** Operations using it that name no client. */
  unnamed: number;
}

export interface OperationsCheck {
  /** How many known operations were checked. */
  checked: number;
  /** Each breaking change with the clients it affects (when usage is known: the deployed schema composes). */
  affected: AffectedClients[];
  broken: BrokenOperation[];
  /** Operations already invalid against the deployed schema: not this change's doing, reported apart. */
  stale: BrokenOperation[];
  /** False when the deployed API schema could not be built: then only validation against the proposed one counts. */
  usageKnown: boolean;
}

/**
 * The operations a change breaks: those invalid against the proposed API schema, and those that touch a breaking
 * change in the deployed one (a type change passes validation yet breaks the client reading it; `deployed` undefined:
 * validation only), each with its reasons.
 */
export function checkOperations(
  operations: KnownOperation[],
  proposed: GraphQLSchema,
  deployed: GraphQLSchema | undefined,
  changes: ClassifiedChange[],
): OperationsCheck {
  const breaking = changes.filter((change) => change.impact === 'breaking');
  const result: OperationsCheck = { checked: operations.length, affected: [], broken: [], stale: [], usageKnown: deployed !== undefined };
  const users = new Map(breaking.map((change) => [change, [] as KnownOperation[]]));
  for (const operation of operations) {
    const entry = (reasons: string[]) => ({ id: operation.id, name: operation.name, clients: operation.clients, reasons: [...new Set(reasons)] });
    const before = deployed ? validate(deployed, operation.document).map((error) => error.message) : [];
    if (before.length > 0) {
      result.stale.push(entry(before));
      continue;
    }
    const reasons = validate(proposed, operation.document).map((error) => error.message);
    // Usage is read in the deployed schema, where the operation is valid (a removed field is no longer in the proposed one).
    if (deployed && breaking.length > 0) {
      const used = usage(deployed, operation.document);
      for (const change of breaking) {
        if (!touches(change, used)) continue;
        reasons.push(`uses ${change.path}: ${change.message}`);
        users.get(change)!.push(operation);
      }
    }
    if (reasons.length > 0) result.broken.push(entry(reasons));
  }
  if (result.usageKnown) {
    result.affected = breaking.map((change) => {
      const using = users.get(change)!;
      return {
        change,
        clients: [...new Set(using.flatMap((operation) => operation.clients))].sort(),
        operations: using.length,
        unnamed: using.filter((operation) => operation.clients.length === 0).length,
      };
    });
  }
  return result;
}
