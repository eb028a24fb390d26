// Answers in parts (@defer, @stream) as a client reads them: the parts of a multipart/mixed response, in either
// incremental format, and the result they add up to.

type Path = (string | number)[];
export type PartErrors = { message: string; path?: Path; extensions?: Record<string, any> }[];

/** A part in either format: 2022-08-24's `incremental` entries carry a `path`, the current format's an `id`. */
export interface Part {
  data?: Record<string, any> | null;
  errors?: PartErrors;
  pending?: { id: string; path: Path; label?: string }[];
  incremental?: { id?: string; data?: Record<string, any> | null; items?: unknown[] | null; path?: Path; label?: string; errors?: PartErrors }[];
  completed?: { id: string; errors?: PartErrors }[];
  extensions?: Record<string, any>;
  hasNext?: boolean;
}

/** The parts of a multipart/mixed body (RFC 2046: parts between `--boundary` lines); a JSON body as its one part. */
export function partsOf(contentType: string | null, text: string): Part[] {
  const boundary = /boundary="?([^";]+)"?/.exec(contentType ?? '')?.[1];
  if (!contentType?.startsWith('multipart/mixed') || !boundary) return [JSON.parse(text) as Part];
  return text
    .split(`--${boundary}`)
    .map((chunk) => chunk.split('\r\n\r\n').slice(1).join('\r\n\r\n').trim())
    .filter((body) => body.length > 0)
    .map((body) => JSON.parse(body) as Part);
}

/** An answer in parts put back together, in either format: the data a client of it ends with, and every error on the way. */
export function assembled(parts: readonly Part[]): { data: Record<string, any> | null; errors: PartErrors } {
  const first = parts[0]!;
  const data = first.data === undefined || first.data === null ? (first.data ?? null) : structuredClone(first.data);
  const errors: PartErrors = [...(first.errors ?? [])];
  const pending = new Map<string, Path>();
  const at = (path: Path) => path.reduce<any>((value, key) => value[key], data);
  for (const [index, part] of parts.entries()) {
    if (index > 0) errors.push(...(part.errors ?? []));
    for (const { id, path } of part.pending ?? []) pending.set(id, path);
    for (const entry of part.incremental ?? []) {
      const path = entry.id !== undefined ? pending.get(entry.id)! : entry.items ? entry.path!.slice(0, -1) : entry.path!;
      if (entry.items) at(path).push(...entry.items);
      else if (entry.data) Object.assign(at(path), entry.data);
      errors.push(...(entry.errors ?? []));
    }
    for (const entry of part.completed ?? []) errors.push(...(entry.errors ?? []));
  }
  return { data, errors };
}
