// The JSON of a subscription event as the transports write it (event-stream.ts, websocket.ts, multipart.ts): produced
// once per event, however many subscribers receive it.
import { GraphQLError, type ExecutionResult } from 'graphql';

/** Extensions yoga uses internally and never writes: the HTTP status and headers, and its masking mark. */
const INTERNAL_EXTENSIONS = ['http', 'unexpected'];

/** An error as it leaves, without yoga's internal extensions (what yoga's own event stream writes). */
function formattedError(error: unknown): unknown {
  if (!(error instanceof GraphQLError)) return error;
  const { extensions, ...formatted } = error.toJSON();
  const kept = Object.fromEntries(Object.entries(extensions ?? {}).filter(([name]) => !INTERNAL_EXTENSIONS.includes(name)));
  return Object.keys(kept).length ? { ...formatted, extensions: kept } : formatted;
}

/** A result's JSON without internals: the result itself unless it has errors or an `http` extension. */
function serialise(result: ExecutionResult): string {
  const extensions = result.extensions as Record<string, unknown> | undefined;
  if (!result.errors?.length && !extensions?.['http']) return JSON.stringify(result);
  const { http: _http, ...kept } = extensions ?? {};
  return JSON.stringify({
    ...result,
    ...(result.errors ? { errors: result.errors.map(formattedError) } : {}),
    extensions: Object.keys(kept).length ? kept : undefined,
  });
}

/**
 * Each result's JSON, by the result object: the subscribers of a shared stream (subscriptions/sharing.ts) receive the
 * same object for an event, so the first transport to write it serialises it and the others, over SSE, WebSocket or
 * multipart, take the text. A plugin that replaces a subscriber's result (an error it maps, say) makes a new object,
 * serialised on its own.
 */
const serialised = new WeakMap<object, string>();
export function resultJson(result: ExecutionResult): string {
  let text = serialised.get(result);
  if (text === undefined) serialised.set(result, (text = serialise(result)));
  return text;
}
