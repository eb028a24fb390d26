// Tracing is off and free unless OTEL_EXPORTER_OTLP_ENDPOINT is set: no OpenTelemetry package is even loaded. Each case
// runs in a fresh Node process, where what startTelemetry loaded is all that is loaded.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const PACKAGE_ROOT = fileURLToPath(new URL('..', import.meta.url));
/** Bounds a hang only: loading the SDK in a fresh process takes seconds, and much longer on a loaded machine. */
const PROCESS_TIMEOUT_MS = 180_000;

// Starts telemetry as a process's index.ts does, then reports which @opentelemetry modules are in the module cache.
const PROBE = `
  const { startTelemetry } = await import('@ordergraph/core/telemetry');
  const telemetry = await startTelemetry('probe', { instrument: true });
  const { createRequire } = await import('node:module');
  const loaded = Object.keys(createRequire(process.cwd() + '/').cache).filter((path) => path.includes('@opentelemetry'));
  console.log(JSON.stringify({ started: telemetry !== undefined, loaded: loaded.length }));
  await telemetry?.shutdown();
`;

async function probe(env: Record<string, string>) {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('OTEL_')));
  const { stdout } = await promisify(execFile)(process.execPath, ['--conditions=source', '--import', 'tsx', '--input-type=module', '-e', PROBE], {
    cwd: PACKAGE_ROOT,
    env: { ...clean, ...env },
  });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as { started: boolean; loaded: number };
}

describe('startTelemetry', () => {
  it('loads nothing of OpenTelemetry while OTEL_EXPORTER_OTLP_ENDPOINT is unset', async () => {
    expect(await probe({ OTEL_SERVICE_NAME: 'probe', OTEL_TRACES_SAMPLER: 'always_on' })).toEqual({ started: false, loaded: 0 });
  }, PROCESS_TIMEOUT_MS);

  it('starts the SDK with its instrumentation once an endpoint is set', async () => {
    const result = await probe({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' });
    expect(result.started).toBe(true);
    expect(result.loaded).toBeGreaterThan(0);
  }, PROCESS_TIMEOUT_MS);

  it('refuses an invalid OTEL_* value at start with a JSON line naming it', async () => {
    const failure = await probe({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }).catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: 1 });
    const line = JSON.parse(String((failure as { stdout: string }).stdout).trim().split('\n')[0]!) as Record<string, unknown>;
    expect(line).toMatchObject({ level: 60, service: 'probe', msg: 'failed to start' });
    expect(JSON.stringify(line['err'])).toContain('OTEL_EXPORTER_OTLP_PROTOCOL');
  }, PROCESS_TIMEOUT_MS);
});
