// The heap of another Node.js process, read through its inspector (a process started with --inspect=127.0.0.1:<port>):
// the Chrome DevTools Protocol over a WebSocket. It is the only way to have another process collect its garbage on
// demand (--expose-gc exposes gc() to the process's own code only), so a heap figure is what is retained, not what
// the collector has not got round to yet.
import { createWriteStream } from 'node:fs';
import WebSocket from 'ws';

export interface HeapFigures {
  /** V8's heap in use after full collections, in bytes (process.memoryUsage().heapUsed). */
  heapUsed: number;
  /** Resident set size at the same moment, in bytes. */
  rss: number;
}

/** process.memoryUsage() of the inspected process, in bytes. */
export type MemoryUsage = ReturnType<typeof process.memoryUsage>;

export interface Inspector {
  /** process.memoryUsage() as it is now, without a collection first. */
  memoryUsage(): Promise<MemoryUsage>;
  /** Collects garbage (full, twice: weak references and finalizers free more on the second) and reads the heap. */
  settledHeap(): Promise<HeapFigures>;
  /** Writes a heap snapshot (the .heapsnapshot format DevTools and bench/heap-snapshot.ts read) to `path`. */
  heapSnapshot(path: string): Promise<void>;
  close(): void;
}

interface Reply {
  id?: number;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { message: string };
}

/** Attaches to the inspector listening on `port` (its first target: the process's main thread). */
export async function attachInspector(port: number): Promise<Inspector> {
  const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as { webSocketDebuggerUrl: string }[];
  const url = targets[0]?.webSocketDebuggerUrl;
  if (!url) throw new Error(`no inspector target on port ${port}`);
  const socket = new WebSocket(url, { perMessageDeflate: false, maxPayload: 2 ** 30 });
  await new Promise<void>((done, fail) => {
    socket.once('open', () => done());
    socket.once('error', fail);
  });
  let next = 0;
  const pending = new Map<number, { done: (result: Record<string, unknown>) => void; fail: (error: Error) => void }>();
  const events = new Map<string, (params: Record<string, unknown>) => void>();
  socket.on('message', (data) => {
    const message = JSON.parse(String(data)) as Reply;
    if (message.id !== undefined) {
      const call = pending.get(message.id);
      pending.delete(message.id);
      if (message.error) call?.fail(new Error(message.error.message));
      else call?.done(message.result ?? {});
    } else if (message.method) {
      events.get(message.method)?.(message.params ?? {});
    }
  });
  socket.on('close', () => {
    for (const call of pending.values()) call.fail(new Error('inspector connection closed'));
    pending.clear();
  });
  const send = (method: string, params: Record<string, unknown> = {}) =>
    new Promise<Record<string, unknown>>((done, fail) => {
      const id = ++next;
      pending.set(id, { done, fail });
      socket.send(JSON.stringify({ id, method, params }));
    });

  const memoryUsage = async () => {
    const evaluated = await send('Runtime.evaluate', { expression: 'process.memoryUsage()', returnByValue: true });
    const usage = (evaluated['result'] as { value?: MemoryUsage }).value;
    if (!usage) throw new Error(`process.memoryUsage() through the inspector: ${JSON.stringify(evaluated)}`);
    return usage;
  };

  return {
    memoryUsage,
    async settledHeap() {
      for (let pass = 0; pass < 2; pass++) {
        await send('HeapProfiler.collectGarbage');
        // Lets the process run its microtasks and FinalizationRegistry callbacks between the two collections.
        await new Promise((done) => setTimeout(done, 100));
      }
      const usage = await memoryUsage();
      return { heapUsed: usage.heapUsed, rss: usage.rss };
    },
    async heapSnapshot(path) {
      const file = createWriteStream(path);
      events.set('HeapProfiler.addHeapSnapshotChunk', (params) => file.write(params['chunk'] as string));
      try {
        await send('HeapProfiler.takeHeapSnapshot', { reportProgress: false, captureNumericValue: false });
      } finally {
        events.delete('HeapProfiler.addHeapSnapshotChunk');
        await new Promise<void>((done, fail) => file.end((error?: Error | null) => (error ? fail(error) : done())));
      }
    },
    close: () => socket.close(),
  };
}
