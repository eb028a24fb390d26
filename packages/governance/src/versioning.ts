// The spec's Versioning table as code: each difference @graphql-inspector/core finds between the deployed schema and a
// proposed one, classified under the table's rows (else graphql-inspector's own verdict). Breaking changes block.
import { ChangeType, CriticalityLevel, DiffRule, diff, type Change } from '@graphql-inspector/core';
import { isEnumType, isInputObjectType, isInterfaceType, isObjectType, type GraphQLField, type GraphQLSchema } from 'graphql';

export type Impact = 'breaking' | 'non-breaking';

/** The rows of the spec's Versioning table, with the impact the table gives each. */
export const VERSIONING_TABLE = {
  'Add field': 'non-breaking',
  'Add nullable argument': 'non-breaking',
  'Deprecate field': 'non-breaking',
  'Add enum value': 'non-breaking',
  'Remove field': 'breaking',
  'Rename field': 'breaking',
  'Change field type': 'breaking',
  'Add non-null argument': 'breaking',
  'Remove enum value': 'breaking',
} as const satisfies Record<string, Impact>;

export type VersioningRow = keyof typeof VERSIONING_TABLE;

export interface ClassifiedChange {
  /** The table's row, "Remove deprecated field"/"Remove deprecated enum value" (the deprecation rule), or, for a
   * change the table does not list, graphql-inspector's change type in words. */
  kind: string;
  impact: Impact;
  /** Schema coordinate, for example `Product.price` or `Query.products.limit`. */
  path: string;
  message: string;
  /** What to do instead or why it breaks, for a breaking change; what clients should know, for some others. */
  hint?: string;
}

/*
 * "Deprecated for a release": deprecated in the baseline, the last published release's schema. A field, input field or
 * enum value @deprecated there may be removed; one that is not (even if deprecated and removed in the same change) may
 * not, as no release ever told clients to migrate.
 */
const DEPRECATE_FIRST = 'mark it @deprecated(reason: "...") and publish that release first; remove it in a later release';

/** Federation's own machinery (_entities, _Entity, link__Import ...) and directive definitions are composition's
 * business, checked by composition itself; clients never select them. */
function isFederationInternal(change: Change): boolean {
  const path = change.path ?? '';
  return path.startsWith('@') || /^(_|link__|federation__)/.test(path) || /^(Query|Mutation)\._(service|entities)\b/.test(path);
}

const signature = (field: GraphQLField<unknown, unknown>) =>
  `${String(field.type)}(${field.args.map((arg) => `${arg.name}: ${String(arg.type)}`).join(', ')})`;

function fieldOf(schema: GraphQLSchema, typeName: string, fieldName: string) {
  const type = schema.getType(typeName);
  return isObjectType(type) || isInterfaceType(type) ? type.getFields()[fieldName] : undefined;
}

/**
 * Pairs a removed, undeprecated field with a field added to the same type under another name with the same type and
 * arguments: that is a rename, reported as one breaking change instead of a removal and an addition.
 */
function findRenames(changes: Change[], oldSchema: GraphQLSchema, newSchema: GraphQLSchema): Map<Change, Change> {
  const renames = new Map<Change, Change>();
  const added = changes.filter((change) => change.type === ChangeType.FieldAdded) as Change<typeof ChangeType.FieldAdded>[];
  for (const removed of changes.filter((change) => change.type === ChangeType.FieldRemoved) as Change<typeof ChangeType.FieldRemoved>[]) {
    if (removed.meta.isRemovedFieldDeprecated) continue;
    const old = fieldOf(oldSchema, removed.meta.typeName, removed.meta.removedFieldName);
    const candidates = added.filter((addition) => {
      const field = addition.meta.typeName === removed.meta.typeName && fieldOf(newSchema, addition.meta.typeName, addition.meta.addedFieldName);
      return field && old && signature(field) === signature(old);
    });
    if (candidates.length === 1 && ![...renames.values()].includes(candidates[0]!)) renames.set(removed, candidates[0]!);
  }
  return renames;
}

const words = (type: string) => type.charAt(0) + type.slice(1).toLowerCase().replaceAll('_', ' ');

function classify(change: Change, renamedTo: Change<typeof ChangeType.FieldAdded> | undefined): ClassifiedChange {
  const base = { path: change.path ?? '', message: change.message };
  const row = (kind: VersioningRow, hint?: string): ClassifiedChange => ({ ...base, kind, impact: VERSIONING_TABLE[kind], ...(hint ? { hint } : {}) });
  switch (change.type) {
    case ChangeType.FieldAdded:
      return row('Add field');
    case ChangeType.FieldDeprecationAdded:
      return row('Deprecate field', 'clients have until the next release to migrate; then it may be removed');
    case ChangeType.FieldRemoved: {
      const { meta } = change as Change<typeof ChangeType.FieldRemoved>;
      if (meta.isRemovedFieldDeprecated) return { ...base, kind: 'Remove deprecated field', impact: 'non-breaking', hint: 'deprecated in the baseline release' };
      if (renamedTo) {
        const message = `Field '${meta.typeName}.${meta.removedFieldName}' was renamed to '${renamedTo.meta.addedFieldName}'`;
        return { ...row('Rename field', `keep '${meta.removedFieldName}' next to '${renamedTo.meta.addedFieldName}', ${DEPRECATE_FIRST}`), message };
      }
      return row('Remove field', DEPRECATE_FIRST);
    }
    case ChangeType.FieldTypeChanged: {
      const { meta } = change as Change<typeof ChangeType.FieldTypeChanged>;
      const safe = meta.isSafeFieldTypeChange ? ' (harmless to most clients, but the table counts every type change)' : '';
      return row('Change field type', `add a field with the new type and deprecate this one${safe}`);
    }
    case ChangeType.FieldArgumentAdded: {
      const { meta } = change as Change<typeof ChangeType.FieldArgumentAdded>;
      return meta.addedArgumentType.endsWith('!')
        ? row('Add non-null argument', 'make the argument nullable; existing queries do not pass it')
        : row('Add nullable argument');
    }
    case ChangeType.EnumValueAdded:
      return row('Add enum value', 'clients that switch on this enum must handle the new value');
    case ChangeType.EnumValueRemoved: {
      const { meta } = change as Change<typeof ChangeType.EnumValueRemoved>;
      if (meta.isEnumValueDeprecated) return { ...base, kind: 'Remove deprecated enum value', impact: 'non-breaking', hint: 'deprecated in the baseline release' };
      return row('Remove enum value', DEPRECATE_FIRST);
    }
    default:
      // Not in the table: graphql-inspector's verdict. Removing something deprecated in the baseline (an input field,
      // for instance) comes back DANGEROUS from its suppressRemovalOfDeprecatedField rule, so it passes as above.
      return {
        ...base,
        kind: words(change.type),
        impact: change.criticality.level === CriticalityLevel.Breaking ? 'breaking' : 'non-breaking',
        // Its reason says why a change is breaking or dangerous; for harmless ones it is noise.
        ...(change.criticality.reason && change.criticality.level !== CriticalityLevel.NonBreaking ? { hint: change.criticality.reason } : {}),
      };
  }
}

const changeKey = (change: Change) => `${change.type} ${change.path ?? ''} ${change.message}`;

/** Whether a schema coordinate (`Type`, `Type.field`, `Enum.VALUE`, `Type.field.argument`) names something in `schema`. */
function hasCoordinate(schema: GraphQLSchema, coordinate: string): boolean {
  const [typeName = '', fieldName, argumentName] = coordinate.split('.');
  const type = schema.getType(typeName);
  if (!type || fieldName === undefined) return Boolean(type);
  if (isEnumType(type)) return Boolean(type.getValue(fieldName));
  if (!isObjectType(type) && !isInterfaceType(type) && !isInputObjectType(type)) return false;
  const field = type.getFields()[fieldName];
  if (!field || argumentName === undefined) return Boolean(field);
  return 'args' in field && field.args.some((argument) => argument.name === argumentName);
}

/*
 * graphql-inspector's simplifyChanges rule folds every change under a coordinate that got a "simple" change into that
 * one, so that a new type or field is one change and not one per field or argument. It does not ask what the simple
 * change was: a description added to a field hides the field's type change, one added to a type hides a field's
 * removal. So a change the table calls breaking is kept when the rule folded it away, unless what it sits under is new.
 */
async function diffSimplified(baseline: GraphQLSchema, proposed: GraphQLSchema): Promise<Change[]> {
  const all = await diff(baseline, proposed, [DiffRule.suppressRemovalOfDeprecatedField]);
  const simplified = new Set((await diff(baseline, proposed, [DiffRule.simplifyChanges, DiffRule.suppressRemovalOfDeprecatedField])).map(changeKey));
  return all.filter((change) => {
    if (simplified.has(changeKey(change))) return true;
    const path = change.path ?? '';
    const parent = path.includes('.') ? path.slice(0, path.lastIndexOf('.')) : undefined;
    return classify(change, undefined).impact === 'breaking' && (parent === undefined || hasCoordinate(baseline, parent));
  });
}

/** Every change from `baseline` to `proposed`, classified by the spec's Versioning table. */
export async function classifyChanges(baseline: GraphQLSchema, proposed: GraphQLSchema): Promise<ClassifiedChange[]> {
  const changes = (await diffSimplified(baseline, proposed)).filter((change) => !isFederationInternal(change));
  const renames = findRenames(changes, baseline, proposed);
  const renamedAdditions = new Set(renames.values());
  return changes
    .filter((change) => !renamedAdditions.has(change))
    .map((change) => classify(change, renames.get(change) as Change<typeof ChangeType.FieldAdded> | undefined));
}
