// The heap of this process after a full collection, for tests that a long-lived stream retains nothing per event.
// Needs node's --expose-gc (vitest.config.ts passes it to every test process).

const collect = (globalThis as { gc?: () => void }).gc;

/** heapUsed after a forced full collection (several passes: weak references and finalizers free more on the next). */
export async function settledHeapBytes(): Promise<number> {
  if (!collect) throw new Error('global.gc is missing: run node with --expose-gc');
  for (let pass = 0; pass < 4; pass++) {
    collect();
    await new Promise((resolve) => setImmediate(resolve));
  }
  return process.memoryUsage().heapUsed;
}
