import { plainToInstance, Transform } from 'class-transformer';
import { IsBoolean, IsIn, IsInt, IsOptional, IsString, Matches, Max, Min, validateSync } from 'class-validator';
import { ConfigError } from './config-error';

const toBool = ({ value }: { value: unknown }) =>
  value === undefined || value === '' ? undefined : ['1', 'true', 'yes', 'on'].includes(String(value).toLowerCase());
const toInt = ({ value }: { value: unknown }) => (value === undefined || value === '' ? undefined : Number(value));

/**
 * Every environment variable the processes read. `.env.example` documents each one.
 * This is the only place that knows the variables' names.
 */
export class EnvSchema {
  @IsIn(['development', 'production', 'test'])
  NODE_ENV: 'development' | 'production' | 'test' = 'development';

  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(65535)
  PORT = 8443;

  @IsString()
  HOST = '0.0.0.0';

  @IsString()
  DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/integrations';

  /** A direct (unpooled) connection for what needs a session: LISTEN, the migration lock, migrations. Unset: DATABASE_URL. */
  @IsOptional()
  @IsString()
  DATABASE_DIRECT_URL?: string;

  /** Named (server-side) prepared statements on the pool: `auto` uses them only when DATABASE_URL is the direct connection. */
  @IsIn(['auto', 'true', 'false'])
  DATABASE_PREPARED_STATEMENTS: 'auto' | 'true' | 'false' = 'auto';

  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(200)
  DATABASE_POOL_SIZE = 10;

  @IsString()
  REDIS_URL = 'redis://127.0.0.1:6379';

  @IsString()
  REDIS_PREFIX = 'ia';

  // Redis as operators run it (docs/operations/scale.md, "Redis: TLS, ACL, Sentinel, Cluster"); checked further by AppConfig.
  @IsOptional()
  @IsString()
  REDIS_TLS_CA_FILE?: string;

  @IsString()
  REDIS_SENTINELS = '';

  @IsString()
  REDIS_SENTINEL_MASTER = 'mymaster';

  @IsOptional()
  @IsString()
  REDIS_SENTINEL_USERNAME?: string;

  @IsOptional()
  @IsString()
  REDIS_SENTINEL_PASSWORD?: string;

  @IsString()
  DATA_DIR = '.data';

  @IsOptional()
  @IsString()
  TLS_CERT_FILE?: string;

  @IsOptional()
  @IsString()
  TLS_KEY_FILE?: string;

  @IsString()
  TRUSTED_PROXIES = '';

  @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
  LOG_LEVEL = 'info';

  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(3600)
  AUTH_CACHE_TTL_SECONDS = 60;

  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(720)
  IDEMPOTENCY_TTL_HOURS = 24;

  @Transform(toBool)
  @IsBoolean()
  MIGRATIONS_RUN_ON_START = false;

  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(65535)
  WORKER_HEALTH_PORT = 8081;

  // Metrics (see docs/operations/metrics.md): the api's private scrape port; the worker's /metrics is on WORKER_HEALTH_PORT.
  @Transform(toBool)
  @IsBoolean()
  METRICS_ENABLED = true;

  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(65535)
  METRICS_PORT = 9464;

  /** The address of the api's metrics port and of the worker's health port (its metrics beside its probes). Unset or empty: HOST. */
  @IsOptional()
  @IsString()
  METRICS_HOST?: string;

  @Transform(toInt)
  @IsInt()
  @Min(1000)
  @Max(600000)
  SHUTDOWN_GRACE_MS = 25000;

  @IsOptional()
  @Matches(/^smtps?:\/\/[^\s/]+(\/\S*)?$/, { message: 'must be an smtp:// or smtps:// URL (e.g. smtps://user:password@mail.example.org:465)' })
  SMTP_URL?: string;

  @IsString()
  MAIL_FROM = 'Interpreting platform <no-reply@localhost>';

  @IsOptional()
  @IsString()
  PUBLIC_BASE_URL?: string;

  /** Unset: the api's own stand-in page under PUBLIC_BASE_URL/member-app (see AppConfig.memberAppStandIn). */
  @IsOptional()
  @Matches(/^https?:\/\/[^\s/]+(\/\S*)?$/, { message: "must be an http:// or https:// URL (the member app's base, e.g. https://app.example.org)" })
  MEMBER_APP_BASE_URL?: string;

  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(90)
  INVITATION_TTL_DAYS = 14;

  @IsString()
  WEBHOOK_ALLOWED_PRIVATE_CIDRS = '';

  @IsOptional()
  @Transform(({ value }) => (value === undefined || value === '' ? undefined : Number(value)))
  WEBHOOK_RETRY_SCALE?: number;

  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(1000)
  WEBHOOK_CONCURRENCY = 50;

  /** Tests only (refused in production): every scheduled job runs this often instead of its own period. */
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(200)
  @Max(3600000)
  SCHEDULE_EVERY_MS?: number;

  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(1000)
  WEBHOOK_MAX_IN_FLIGHT_PER_WEBHOOK = 10;

  @IsIn(['none', 'libretranslate', 'deepl', 'apertium'])
  TRANSLATION_ENGINE: 'none' | 'libretranslate' | 'deepl' | 'apertium' = 'none';

  @IsOptional()
  @Matches(/^https?:\/\/[^\s/]+(\/\S*)?$/, { message: 'must be an http:// or https:// URL (the engine, e.g. http://libretranslate:5000)' })
  TRANSLATION_ENGINE_URL?: string;

  @IsOptional()
  @IsString()
  TRANSLATION_ENGINE_KEY?: string;

  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(100)
  TRANSLATION_CONCURRENCY = 4;

  @Transform(toInt)
  @IsInt()
  @Min(1024)
  @Max(104857600)
  DOCUMENT_MAX_FILE_BYTES = 10485760;

  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(10000000)
  DOCUMENT_MAX_TEXT_CHARS = 100000;

  // Slow clients (api): see docs/operations/deploying.md. Headers must be within the whole-request limit.
  @Transform(toInt)
  @IsInt()
  @Min(1000)
  @Max(120000)
  HTTP_HEADERS_TIMEOUT_MS = 10000;

  @Transform(toInt)
  @IsInt()
  @Min(1000)
  @Max(600000)
  HTTP_BODY_IDLE_TIMEOUT_MS = 10000;

  @Transform(toInt)
  @IsInt()
  @Min(1000)
  @Max(3600000)
  HTTP_REQUEST_TIMEOUT_MS = 300000;

  @Transform(toInt)
  @IsInt()
  @Min(1000)
  @Max(600000)
  HTTP_KEEP_ALIVE_TIMEOUT_MS = 5000;

  // Per-connection rate limits (api): a token bucket in Redis per connection; see docs/operations/scale.md, "Rate limits".
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(1000000)
  RATE_LIMIT_PER_SECOND = 100;

  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(10000000)
  RATE_LIMIT_BURST = 200;

  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(1000000)
  SCIM_RATE_LIMIT_PER_SECOND = 100;

  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(10000000)
  SCIM_RATE_LIMIT_BURST = 200;

  // Traces (docs/operations/traces.md): off unless the endpoint is set.
  @IsOptional()
  @Matches(/^https?:\/\/[^\s/]+(\/\S*)?$/, { message: 'must be an http:// or https:// URL (the OTLP/HTTP base, e.g. http://collector:4318)' })
  OTEL_EXPORTER_OTLP_ENDPOINT?: string;

  @IsOptional()
  @IsString()
  @Matches(/^\S{1,200}$/, { message: 'must be 1 to 200 characters without spaces' })
  OTEL_SERVICE_NAME?: string;
}

/** Validates raw variables; throws one error listing every problem. */
export function validateEnv(raw: Record<string, unknown>): EnvSchema {
  const known = Object.keys(new EnvSchema()).concat([
    'DATABASE_DIRECT_URL',
    'TLS_CERT_FILE',
    'TLS_KEY_FILE',
    'SMTP_URL',
    'PUBLIC_BASE_URL',
    'MEMBER_APP_BASE_URL',
    'WEBHOOK_RETRY_SCALE',
    'SCHEDULE_EVERY_MS',
    'TRANSLATION_ENGINE_URL',
    'TRANSLATION_ENGINE_KEY',
    'REDIS_TLS_CA_FILE',
    'REDIS_SENTINEL_USERNAME',
    'REDIS_SENTINEL_PASSWORD',
    'OTEL_EXPORTER_OTLP_ENDPOINT',
    'OTEL_SERVICE_NAME',
    'METRICS_HOST',
  ]);
  const picked = Object.fromEntries(Object.entries(raw).filter(([k, v]) => known.includes(k) && v !== ''));
  const env = plainToInstance(EnvSchema, picked, { exposeDefaultValues: true });
  const errors = validateSync(env, { whitelist: true });
  if (errors.length > 0) {
    const lines = errors.map((e) => `${e.property}: ${Object.values(e.constraints ?? {}).join(', ')}`);
    throw new ConfigError(`Invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  return env;
}
