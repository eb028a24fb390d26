// Global IDs and cursors: opaque base64url strings, so clients never see or depend on local ids.

export interface GlobalId {
  type: string;
  localId: string;
}

const encode = (text: string): string => Buffer.from(text, 'utf8').toString('base64url');
const BASE64URL = /^[A-Za-z0-9_-]+$/;

function decode(text: string): string | null {
  if (text.length === 0 || text.length > 512 || !BASE64URL.test(text)) return null;
  return Buffer.from(text, 'base64url').toString('utf8');
}

/** `User:42` -> base64url. */
export function toGlobalId(type: string, localId: string): string {
  return encode(`${type}:${localId}`);
}

/** The type and local id a global ID names, or null when it is not one of ours. */
export function fromGlobalId(id: string): GlobalId | null {
  const text = decode(id);
  if (text === null) return null;
  const colon = text.indexOf(':');
  if (colon <= 0 || colon === text.length - 1) return null;
  const type = text.slice(0, colon);
  const localId = text.slice(colon + 1);
  if (!/^[A-Z][A-Za-z0-9]*$/.test(type)) return null;
  return { type, localId };
}

/** The local id of a global ID of the given type, or null when the ID names another type or is malformed. */
export function localIdOf(type: string, id: string): string | null {
  const parsed = fromGlobalId(id);
  return parsed?.type === type ? parsed.localId : null;
}

/** A keyset position: the sort key and the tie-breaking local id. */
export interface Keyset {
  createdAt: Date;
  id: string;
}

export function encodeCursor(position: Keyset): string {
  return encode(JSON.stringify([position.createdAt.toISOString(), position.id]));
}

export function decodeCursor(cursor: string): Keyset | null {
  const text = decode(cursor);
  if (text === null) return null;
  try {
    const value: unknown = JSON.parse(text);
    if (!Array.isArray(value) || value.length !== 2) return null;
    const [createdAt, id] = value as unknown[];
    if (typeof createdAt !== 'string' || typeof id !== 'string') return null;
    const date = new Date(createdAt);
    return Number.isNaN(date.getTime()) ? null : { createdAt: date, id };
  } catch {
    return null;
  }
}
