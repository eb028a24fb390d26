// The shape of a document, bounded before anything expands it: the nesting of its brackets, scanned before graphql-js's
// recursive parser sees it, and the size of each operation once its fragments are expanded, measured in one linear pass
// in which each fragment is measured once. A fragment spread twice in a fragment spread twice ... doubles the expanded
// size at each level (2^30 selections in 1.5 KB): everything that walks the expanded tree (validation libraries,
// authorization, the query planner) must never see such a document, so the parser refuses it.
import { Kind, type DocumentNode, type FragmentDefinitionNode, type SelectionSetNode } from 'graphql';

/** What an operation comes to once every fragment spread is replaced by its fragment's selections. */
export interface ExpandedSize {
  /** Field selections, `__typename` included; a fragment spread n times counts n times. */
  fields: number;
  /** Aliased fields, counted as `fields` is. */
  aliases: number;
  /** The longest chain of nested fields; fragments add no level; `__schema`/`__type` subtrees are not counted. */
  depth: number;
}

/** Introspection roots; their subtrees are bounded by graphql-js's own MaxIntrospectionDepthRule instead. */
const INTROSPECTION_ROOTS = new Set(['__schema', '__type']);
const NOTHING: ExpandedSize = { fields: 0, aliases: 0, depth: 0 };

/**
 * The expanded size of every operation in the document, each fragment measured once whatever its spreads (a spread of a
 * fragment still being measured, a cycle that validation reports, counts as nothing). Sizes that overflow read
 * Infinity, which every limit refuses.
 */
export function expandedSizes(document: DocumentNode): ExpandedSize[] {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  const measured = new Map<string, ExpandedSize>();
  const fragmentSize = (name: string): ExpandedSize => {
    let size = measured.get(name);
    if (size) return size;
    measured.set(name, NOTHING);
    const fragment = fragments.get(name);
    size = fragment ? selectionSetSize(fragment.selectionSet) : NOTHING;
    measured.set(name, size);
    return size;
  };
  const selectionSetSize = (selectionSet: SelectionSetNode): ExpandedSize => {
    let fields = 0;
    let aliases = 0;
    let depth = 0;
    for (const selection of selectionSet.selections) {
      let inner: ExpandedSize;
      if (selection.kind === Kind.FIELD) {
        const below = selection.selectionSet ? selectionSetSize(selection.selectionSet) : NOTHING;
        inner = {
          fields: 1 + below.fields,
          aliases: (selection.alias ? 1 : 0) + below.aliases,
          depth: INTROSPECTION_ROOTS.has(selection.name.value) ? 0 : 1 + below.depth,
        };
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        inner = selectionSetSize(selection.selectionSet);
      } else {
        inner = fragmentSize(selection.name.value);
      }
      fields += inner.fields;
      aliases += inner.aliases;
      depth = Math.max(depth, inner.depth);
    }
    return { fields, aliases, depth };
  };
  return document.definitions.flatMap((definition) => (definition.kind === Kind.OPERATION_DEFINITION ? [selectionSetSize(definition.selectionSet)] : []));
}

const OPENING = new Set(['{', '[', '(']);
const CLOSING = new Set(['}', ']', ')']);

/**
 * How deeply the brackets of a GraphQL source nest (selection sets, lists, input objects, argument lists), outside
 * strings and comments, stopping as soon as it passes `limit`. Linear and without recursion, so it runs before the
 * parser, whose recursive descent overflows the stack on a few thousand levels.
 */
export function bracketNesting(source: string, limit: number): number {
  let depth = 0;
  let deepest = 0;
  for (let index = 0; index < source.length; index++) {
    const character = source[index]!;
    if (character === '#') {
      while (index < source.length && source[index] !== '\n' && source[index] !== '\r') index++;
    } else if (character === '"') {
      if (source.startsWith('"""', index)) {
        // A block string ends at the first unescaped `"""`.
        index += 3;
        while (index < source.length && !source.startsWith('"""', index)) index += source.startsWith('\\"""', index) ? 4 : 1;
        index += 2;
      } else {
        index++;
        while (index < source.length && source[index] !== '"' && source[index] !== '\n') index += source[index] === '\\' ? 2 : 1;
      }
    } else if (OPENING.has(character)) {
      if (++depth > deepest && (deepest = depth) > limit) return deepest;
    } else if (CLOSING.has(character)) {
      depth--;
    }
  }
  return deepest;
}
