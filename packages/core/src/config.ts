// Environment configuration, validated at start: an unknown value fails with a message naming the variable.
import { z } from 'zod';

/** The development signing secret; refused when NODE_ENV=production. */
export const DEV_JWT_SECRET = 'ordergraph-development-secret-do-not-use-in-production';

const flag = z
  .enum(['true', 'false', '1', '0', ''])
  .optional()
  .transform((value) => value === 'true' || value === '1');

/** How long a stopping process may take by default before it exits regardless (SHUTDOWN_HARD_TIMEOUT). */
export const SHUTDOWN_DEADLINE_MS = 15_000;

/**
 * OpenTelemetry's standard variables, the only way tracing is configured; read by the SDK itself and validated here
 * first so that a typo fails the start instead of silently exporting nothing.
 */
export const telemetryEnvSchema = z.object({
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url().optional().describe('OTLP/HTTP collector base URL (traces go to `<url>/v1/traces`). Unset: tracing is off and no OpenTelemetry code is loaded.'),
  OTEL_EXPORTER_OTLP_PROTOCOL: z.enum(['http/protobuf', 'http/json']).default('http/protobuf').describe('How spans are encoded for the collector.'),
  OTEL_SERVICE_NAME: z.string().optional().describe('The `service.name` of this process\'s spans. Unset: `gateway`, `users`, `orders` or `catalog`.'),
  OTEL_TRACES_SAMPLER: z
    .enum(['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'])
    .default('parentbased_always_on')
    .describe('Which traces are recorded; `parentbased_*` follows the caller\'s `traceparent` decision.'),
  OTEL_TRACES_SAMPLER_ARG: z.coerce.number().min(0).max(1).optional().describe('The ratio for `traceidratio` samplers (0..1).'),
  OTEL_RESOURCE_ATTRIBUTES: z
    .string()
    .regex(/^[^=,\s]+=[^,]*(,[^=,\s]+=[^,]*)*$/, 'must be key=value pairs separated by commas')
    .optional()
    .describe('Extra resource attributes of every span, `key=value,...` (e.g. `deployment.environment=production`).'),
});

/** Settings every process reads. */
export const baseEnvSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development').describe('`production` turns on the production defaults: no development secret, introspection for administrators, no GraphiQL.'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info').describe('Least severe level of the JSON logs on stdout.'),
  JWT_SECRET: z.string().min(32, 'must be at least 32 characters').optional().describe('HS256 secret tokens are signed with (32 characters or more). Unset outside production: the built-in development secret.'),
  JWT_JWKS_URL: z.url().optional().describe('The identity provider\'s JWKS; when set, only RS256/ES256 tokens it signed are accepted.'),
  JWT_ISSUER: z.string().optional().describe('The `iss` claim tokens must carry, when set.'),
  JWT_AUDIENCE: z.string().optional().describe('The `aud` claim tokens must carry, when set.'),
  SUBGRAPH_SIGNING_SECRET: z
    .string()
    .min(32, 'must be at least 32 characters')
    .optional()
    .describe('Secret (32 characters or more, the same in every process) the gateway signs each subgraph request with (HMAC-SHA256, Hive\'s upstream signature) and subgraphs sign their calls to each other with; a subgraph refuses anything else with 403. Required in production; unset elsewhere: nothing is signed or checked.'),
  SHUTDOWN_DELAY: z.coerce
    .number()
    .int()
    .min(0)
    .optional()
    .describe('ms between SIGTERM (/readyz turns 503) and closing the listener, so a load balancer sees the 503 first. Unset: 5000 in production, else 0.'),
  SHUTDOWN_DRAIN_TIMEOUT: z.coerce
    .number()
    .int()
    .min(1)
    .default(8_000)
    .describe('ms in-flight requests may take to finish once the listener is closed; connections still open then are cut.'),
  SHUTDOWN_HARD_TIMEOUT: z.coerce
    .number()
    .int()
    .min(1)
    .default(SHUTDOWN_DEADLINE_MS)
    .describe('ms after the signal at which the process exits (1) whatever remains; must exceed SHUTDOWN_DELAY + SHUTDOWN_DRAIN_TIMEOUT.'),
  ...telemetryEnvSchema.shape,
});

/** How a process drains on SIGTERM/SIGINT (run.ts). */
export interface ShutdownSettings {
  delayMs: number;
  drainTimeoutMs: number;
  hardTimeoutMs: number;
}

export function shutdownSettings(config: z.output<typeof baseEnvSchema>): ShutdownSettings {
  const delayMs = config.SHUTDOWN_DELAY ?? (config.NODE_ENV === 'production' ? 5_000 : 0);
  if (config.SHUTDOWN_HARD_TIMEOUT <= delayMs + config.SHUTDOWN_DRAIN_TIMEOUT) {
    throw new ConfigError('Invalid configuration:\n  SHUTDOWN_HARD_TIMEOUT: must exceed SHUTDOWN_DELAY + SHUTDOWN_DRAIN_TIMEOUT');
  }
  return { delayMs, drainTimeoutMs: config.SHUTDOWN_DRAIN_TIMEOUT, hardTimeoutMs: config.SHUTDOWN_HARD_TIMEOUT };
}

/** Settings of a subgraph: its datastore and whether to seed it. */
export function subgraphEnvSchema(defaults: { port: number; database: string }) {
  return baseEnvSchema.extend({
    PORT: z.coerce.number().int().min(0).max(65535).default(defaults.port).describe('The port the subgraph listens on.'),
    HOST: z
      .string()
      .optional()
      .describe('The address to listen on. Unset: 127.0.0.1 outside production, so only this machine (the gateway) reaches the subgraph; 0.0.0.0 in production, inside a network only the gateway reaches it by.'),
    MONGO_URL: z.string().regex(/^mongodb(\+srv)?:\/\//, 'must be a mongodb:// or mongodb+srv:// URL').optional().describe('MongoDB to keep data in. Unset: the embedded in-process store.'),
    DATA_DIR: z
      .string()
      .optional()
      .describe('Without MONGO_URL: keep the embedded store in this directory (a journal and a snapshot per subgraph) so a restart keeps every acknowledged write. Unset: in memory, lost on restart.'),
    MONGO_DB: z.string().default(defaults.database).describe('The subgraph\'s own MongoDB database.'),
    MONGO_MAX_POOL_SIZE: z.coerce.number().int().min(1).default(50).describe('Connections one process keeps to MongoDB at most.'),
    MONGO_READ_PREFERENCE: z
      .enum(['primary', 'primaryPreferred', 'secondary', 'secondaryPreferred', 'nearest'])
      .default('primary')
      .describe('Where reads go in a replica set; writes always wait for a majority and are retried once.'),
    SEED: flag.describe('Load the deterministic seed data at start (true/1).'),
    SEED_SCALE: z.coerce
      .number()
      .int()
      .min(1)
      .max(10_000)
      .default(1)
      .describe('Size of the seed data, a factor: 1 seeds 100 users, 200 products and 1,000 orders; 1000 seeds 100,000, 200,000 and 1,000,000. Give every subgraph the same value, since orders name users and products by index. Memory and indexes at size: docs/how-to/run-at-size.md.'),
  });
}

/** The settings every subgraph has, whatever it adds. */
export type SubgraphConfig = z.output<ReturnType<typeof subgraphEnvSchema>>;

/** Where a subgraph listens: never beyond this machine in development, since a subgraph trusts its callers. */
export const subgraphHost = (config: SubgraphConfig): string => config.HOST ?? (config.NODE_ENV === 'production' ? '0.0.0.0' : '127.0.0.1');

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** Parses `env` against `schema`; throws a ConfigError listing every bad variable. */
export function loadConfig<S extends z.ZodType>(schema: S, env: NodeJS.ProcessEnv = process.env): z.output<S> {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== ''));
  const result = schema.safeParse(cleaned);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => `${issue.path.join('.') || '(env)'}: ${issue.message}`);
    throw new ConfigError(`Invalid configuration:\n  ${problems.join('\n  ')}`);
  }
  return result.data;
}

/** The secret subgraph requests are signed with (signature.ts); required in production, where subgraphs trust no one else. */
export function signingSecret(config: z.output<typeof baseEnvSchema>): string | undefined {
  if (config.NODE_ENV === 'production' && !config.SUBGRAPH_SIGNING_SECRET) {
    throw new ConfigError('Invalid configuration:\n  SUBGRAPH_SIGNING_SECRET must be set in production');
  }
  return config.SUBGRAPH_SIGNING_SECRET;
}

/** The JWT settings of a process: the development secret applies only outside production. */
export function authSettings(config: z.output<typeof baseEnvSchema>) {
  if (config.NODE_ENV === 'production' && !config.JWT_SECRET && !config.JWT_JWKS_URL) {
    throw new ConfigError('Invalid configuration:\n  JWT_JWKS_URL or JWT_SECRET must be set in production');
  }
  return {
    jwtSecret: config.JWT_JWKS_URL ? undefined : (config.JWT_SECRET ?? DEV_JWT_SECRET),
    jwksUrl: config.JWT_JWKS_URL,
    issuer: config.JWT_ISSUER,
    audience: config.JWT_AUDIENCE,
  };
}
