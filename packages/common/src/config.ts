// Environment configuration, validated at start: an unknown value fails with a message naming the variable.
import { z } from 'zod';

/** The development signing secret; refused when NODE_ENV=production. */
export const DEV_JWT_SECRET = 'ordergraph-development-secret-do-not-use-in-production';

const flag = z
  .enum(['true', 'false', '1', '0', ''])
  .optional()
  .transform((value) => value === 'true' || value === '1');

/** Settings every process reads. */
export const baseEnvSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  HOST: z.string().default('0.0.0.0'),
  JWT_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
  JWT_JWKS_URL: z.url().optional(),
  JWT_ISSUER: z.string().optional(),
  JWT_AUDIENCE: z.string().optional(),
});

/** Settings of a subgraph: its datastore and whether to seed it. */
export function subgraphEnvSchema(defaults: { port: number; database: string }) {
  return baseEnvSchema.extend({
    PORT: z.coerce.number().int().min(0).max(65535).default(defaults.port),
    MONGO_URL: z.string().regex(/^mongodb(\+srv)?:\/\//, 'must be a mongodb:// or mongodb+srv:// URL').optional(),
    MONGO_DB: z.string().default(defaults.database),
    /** Connections one process keeps to MongoDB at most. */
    MONGO_MAX_POOL_SIZE: z.coerce.number().int().min(1).default(50),
    /** Where reads go in a replica set; writes always wait for a majority and are retried once. */
    MONGO_READ_PREFERENCE: z.enum(['primary', 'primaryPreferred', 'secondary', 'secondaryPreferred', 'nearest']).default('primary'),
    SEED: flag,
  });
}

/** The settings every subgraph has, whatever it adds. */
export type SubgraphConfig = z.output<ReturnType<typeof subgraphEnvSchema>>;

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
