import { isCidr } from './cidr';
import { ConfigError } from './config-error';
import { loadEnvFile } from './env-file';
import { EnvSchema, validateEnv } from './env.schema';

/** One token bucket's settings: it holds at most `burst` calls and refills at `perSecond`. */
export interface RateLimitPolicy {
  /** The policy's name in the RateLimit-Policy and RateLimit headers. */
  name: 'rest' | 'scim';
  perSecond: number;
  burst: number;
}

/** Where Redis is and how to reach it (libs/redis's factory makes every connection from this). */
export interface RedisSettings {
  /** REDIS_URL as given: scheme (redis: or rediss:), username and password (ACL), database; its host is unused with Sentinel. */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  readonly username?: string;
  readonly password?: string;
  readonly db: number;
  /** rediss:// — TLS to Redis (and to the sentinels). */
  readonly tls: boolean;
  /** PEM file of the CA(s) trusted for TLS instead of the system's. */
  readonly tlsCaFile?: string;
  /** Sentinel mode when not empty: the master is asked of these. */
  readonly sentinels: Array<{ host: string; port: number }>;
  readonly sentinelMaster: string;
  readonly sentinelUsername?: string;
  readonly sentinelPassword?: string;
}

function parseRedisUrl(raw: string): Pick<RedisSettings, 'host' | 'port' | 'username' | 'password' | 'db' | 'tls'> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError('Invalid configuration:\n  REDIS_URL: is not a URL (redis://[user:password@]host[:port][/db] or rediss://…)');
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') {
    throw new ConfigError(`Invalid configuration:\n  REDIS_URL: scheme must be redis:// or rediss:// (TLS), not ${url.protocol}//`);
  }
  const dbText = url.pathname.replace(/^\//, '');
  if (dbText !== '' && !/^\d{1,2}$/.test(dbText)) throw new ConfigError('Invalid configuration:\n  REDIS_URL: the path must be a database number (/0 … /15)');
  return {
    host: url.hostname.replace(/^\[(.*)\]$/, '$1') || '127.0.0.1',
    port: url.port ? Number(url.port) : 6379,
    username: url.username ? decodeURIComponent(url.username) : undefined,
    password: url.password ? decodeURIComponent(url.password) : undefined,
    db: dbText ? Number(dbText) : 0,
    tls: url.protocol === 'rediss:',
  };
}

function parseSentinels(raw: string): Array<{ host: string; port: number }> {
  const entries = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return entries.map((entry) => {
    const m = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(entry);
    const port = m ? Number(m[3]) : 0;
    if (!m || port < 1 || port > 65535) {
      throw new ConfigError(
        `Invalid configuration:\n  REDIS_SENTINELS: "${entry}" is not host:port (a comma-separated list, e.g. sentinel-1:26379,sentinel-2:26379)`,
      );
    }
    return { host: m[1] ?? m[2], port };
  });
}

/** Where the api serves its member-app stand-in pages while MEMBER_APP_BASE_URL is unset. */
export const MEMBER_APP_STAND_IN_PATH = '/member-app';

/** Typed, validated settings shared by the api, the worker and the admin CLI. */
export class AppConfig {
  readonly nodeEnv: EnvSchema['NODE_ENV'];
  readonly port: number;
  readonly host: string;
  /** The pool's connection: a transaction-mode pooler (PgBouncer) may stand here. */
  readonly databaseUrl: string;
  /** A direct connection, for what needs a session (LISTEN, session advisory locks, migrations). */
  readonly databaseDirectUrl: string;
  /** Whether the pool may use named (server-side) prepared statements. */
  readonly databasePreparedStatements: boolean;
  readonly databasePoolSize: number;
  readonly redisUrl: string;
  readonly redisPrefix: string;
  readonly redis: RedisSettings;
  readonly dataDir: string;
  readonly tlsCertFile?: string;
  readonly tlsKeyFile?: string;
  /**
   * True when the api serves the self-signed certificate it makes for localhost (TLS_CERT_FILE and
   * TLS_KEY_FILE not both given), which clients accept only when told to (`curl -k`).
   */
  readonly selfSignedTls: boolean;
  /** CIDRs whose `X-Forwarded-For` is believed; empty means never. */
  readonly trustedProxies: string[];
  readonly logLevel: string;
  readonly authCacheTtlSeconds: number;
  readonly idempotencyTtlHours: number;
  readonly migrationsRunOnStart: boolean;
  readonly workerHealthPort: number;
  /**
   * Prometheus metrics: the api's plain-HTTP port (0 picks a free one) and the worker's /metrics;
   * off serves neither. `host` is the address of the api's metrics port and of the worker's health
   * port (METRICS_HOST, else HOST).
   */
  readonly metrics: { enabled: boolean; port: number; host: string };
  readonly shutdownGraceMs: number;
  /** SMTP server for outgoing mail; unset writes .eml files under DATA_DIR/mail. */
  readonly smtpUrl?: string;
  readonly mailFrom: string;
  /** Public https base of the api (invitation links); defaults to https://localhost:PORT. */
  readonly publicBaseUrl: string;
  /** Base of the platform's member app, where CaseUrls and the sign-in links of mails point. */
  readonly memberAppBaseUrl: string;
  /**
   * MEMBER_APP_BASE_URL is unset: the member-app addresses the api hands out point at its own
   * stand-in pages (`publicBaseUrl`/member-app), which say what they are, so that a link answered
   * in development opens a page rather than nothing.
   */
  readonly memberAppStandIn: boolean;
  readonly invitationTtlDays: number;
  /** Private CIDRs webhook deliveries (and creation) may reach anyway; default none. */
  readonly webhookAllowedPrivateCidrs: string[];
  /** Multiplies the retry timetable (tests only; refused in production). 1 = the contract's. */
  readonly webhookRetryScale: number;
  readonly webhookConcurrency: number;
  /** Tests only (refused in production): every scheduled job's period in ms instead of its own; unset keeps the schedules table's. */
  readonly scheduleEveryMs?: number;
  /** Attempts in flight at once for one webhook, across every worker (the rest wait parked, holding no worker slot). */
  readonly webhookMaxInFlightPerWebhook: number;
  readonly translationEngine: EnvSchema['TRANSLATION_ENGINE'];
  readonly translationEngineUrl?: string;
  readonly translationEngineKey?: string;
  readonly translationConcurrency: number;
  readonly documentMaxFileBytes: number;
  readonly documentMaxTextChars: number;
  /** Limits on slow clients of the api (ms). */
  readonly http: { headersTimeoutMs: number; bodyIdleTimeoutMs: number; requestTimeoutMs: number; keepAliveTimeoutMs: number };
  /** Per-connection token buckets of the api: REST (`/v1/` and every other keyed path) and SCIM, each its own. */
  readonly rateLimits: { rest: RateLimitPolicy; scim: RateLimitPolicy };
  /** OpenTelemetry traces: off unless `endpoint` (the OTLP/HTTP base, without `/v1/traces`) is set; `serviceName` overrides the process's default. */
  readonly traces: { endpoint?: string; serviceName?: string };

  constructor(env: EnvSchema) {
    this.nodeEnv = env.NODE_ENV;
    this.port = env.PORT;
    this.host = env.HOST;
    this.databaseUrl = env.DATABASE_URL;
    this.databaseDirectUrl = env.DATABASE_DIRECT_URL ?? env.DATABASE_URL;
    // A statement prepared on one server connection is unknown on the next one a transaction-mode
    // pooler hands out: off whenever DATABASE_URL is not the direct connection, unless told.
    this.databasePreparedStatements =
      env.DATABASE_PREPARED_STATEMENTS === 'auto' ? this.databaseDirectUrl === this.databaseUrl : env.DATABASE_PREPARED_STATEMENTS === 'true';
    this.databasePoolSize = env.DATABASE_POOL_SIZE;
    this.redisUrl = env.REDIS_URL;
    this.redisPrefix = env.REDIS_PREFIX;
    if (/[{}]/.test(env.REDIS_PREFIX)) {
      throw new ConfigError('Invalid configuration:\n  REDIS_PREFIX: must not contain { or } (the BullMQ prefix wraps it in a hash tag itself)');
    }
    const sentinels = parseSentinels(env.REDIS_SENTINELS);
    const parsedUrl = parseRedisUrl(env.REDIS_URL);
    if (env.REDIS_TLS_CA_FILE && !parsedUrl.tls) {
      throw new ConfigError('Invalid configuration:\n  REDIS_TLS_CA_FILE: is set but REDIS_URL is not rediss:// (TLS)');
    }
    if ((env.REDIS_SENTINEL_PASSWORD || env.REDIS_SENTINEL_USERNAME) && sentinels.length === 0) {
      throw new ConfigError('Invalid configuration:\n  REDIS_SENTINEL_USERNAME / REDIS_SENTINEL_PASSWORD: are set but REDIS_SENTINELS is empty');
    }
    this.redis = {
      url: env.REDIS_URL,
      ...parsedUrl,
      tlsCaFile: env.REDIS_TLS_CA_FILE,
      sentinels,
      sentinelMaster: env.REDIS_SENTINEL_MASTER,
      sentinelUsername: env.REDIS_SENTINEL_USERNAME,
      sentinelPassword: env.REDIS_SENTINEL_PASSWORD,
    };
    this.dataDir = env.DATA_DIR;
    this.tlsCertFile = env.TLS_CERT_FILE;
    this.tlsKeyFile = env.TLS_KEY_FILE;
    this.selfSignedTls = !(env.TLS_CERT_FILE && env.TLS_KEY_FILE);
    this.trustedProxies = env.TRUSTED_PROXIES.split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    this.logLevel = env.LOG_LEVEL;
    this.authCacheTtlSeconds = env.AUTH_CACHE_TTL_SECONDS;
    this.idempotencyTtlHours = env.IDEMPOTENCY_TTL_HOURS;
    this.migrationsRunOnStart = env.MIGRATIONS_RUN_ON_START;
    this.workerHealthPort = env.WORKER_HEALTH_PORT;
    this.metrics = { enabled: env.METRICS_ENABLED, port: env.METRICS_PORT, host: env.METRICS_HOST?.trim() || env.HOST };
    this.shutdownGraceMs = env.SHUTDOWN_GRACE_MS;
    this.smtpUrl = env.SMTP_URL;
    this.mailFrom = env.MAIL_FROM;
    this.publicBaseUrl = (env.PUBLIC_BASE_URL ?? `https://localhost:${env.PORT}`).replace(/\/+$/, '');
    this.memberAppStandIn = env.MEMBER_APP_BASE_URL === undefined;
    this.memberAppBaseUrl = (env.MEMBER_APP_BASE_URL ?? `${this.publicBaseUrl}${MEMBER_APP_STAND_IN_PATH}`).replace(/\/+$/, '');
    this.invitationTtlDays = env.INVITATION_TTL_DAYS;
    this.webhookAllowedPrivateCidrs = env.WEBHOOK_ALLOWED_PRIVATE_CIDRS.split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    const badCidrs = [...this.webhookAllowedPrivateCidrs, ...this.trustedProxies].filter((c) => !isCidr(c, { bareAddress: false }));
    if (badCidrs.length > 0) {
      throw new ConfigError(`Invalid configuration:\n  WEBHOOK_ALLOWED_PRIVATE_CIDRS / TRUSTED_PROXIES: not a CIDR: ${badCidrs.join(', ')}`);
    }
    if (env.WEBHOOK_RETRY_SCALE !== undefined && env.NODE_ENV === 'production') {
      throw new ConfigError('Invalid configuration:\n  WEBHOOK_RETRY_SCALE: is for tests only and refused when NODE_ENV=production');
    }
    if (env.WEBHOOK_RETRY_SCALE !== undefined && !(env.WEBHOOK_RETRY_SCALE > 0 && env.WEBHOOK_RETRY_SCALE <= 1)) {
      throw new ConfigError('Invalid configuration:\n  WEBHOOK_RETRY_SCALE: must be a number in (0, 1]');
    }
    this.webhookRetryScale = env.WEBHOOK_RETRY_SCALE ?? 1;
    this.webhookConcurrency = env.WEBHOOK_CONCURRENCY;
    if (env.SCHEDULE_EVERY_MS !== undefined && env.NODE_ENV === 'production') {
      throw new ConfigError('Invalid configuration:\n  SCHEDULE_EVERY_MS: is for tests only and refused when NODE_ENV=production');
    }
    this.scheduleEveryMs = env.SCHEDULE_EVERY_MS;
    this.webhookMaxInFlightPerWebhook = env.WEBHOOK_MAX_IN_FLIGHT_PER_WEBHOOK;
    this.translationEngine = env.TRANSLATION_ENGINE;
    this.translationEngineUrl = env.TRANSLATION_ENGINE_URL;
    this.translationEngineKey = env.TRANSLATION_ENGINE_KEY;
    this.translationConcurrency = env.TRANSLATION_CONCURRENCY;
    this.documentMaxFileBytes = env.DOCUMENT_MAX_FILE_BYTES;
    this.documentMaxTextChars = env.DOCUMENT_MAX_TEXT_CHARS;
    if (env.HTTP_HEADERS_TIMEOUT_MS > env.HTTP_REQUEST_TIMEOUT_MS) {
      throw new ConfigError('Invalid configuration:\n  HTTP_HEADERS_TIMEOUT_MS: must not exceed HTTP_REQUEST_TIMEOUT_MS');
    }
    this.http = {
      headersTimeoutMs: env.HTTP_HEADERS_TIMEOUT_MS,
      bodyIdleTimeoutMs: env.HTTP_BODY_IDLE_TIMEOUT_MS,
      requestTimeoutMs: env.HTTP_REQUEST_TIMEOUT_MS,
      keepAliveTimeoutMs: env.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    };
    this.rateLimits = {
      rest: { name: 'rest', perSecond: env.RATE_LIMIT_PER_SECOND, burst: env.RATE_LIMIT_BURST },
      scim: { name: 'scim', perSecond: env.SCIM_RATE_LIMIT_PER_SECOND, burst: env.SCIM_RATE_LIMIT_BURST },
    };
    this.traces = { endpoint: env.OTEL_EXPORTER_OTLP_ENDPOINT?.replace(/\/+$/, ''), serviceName: env.OTEL_SERVICE_NAME };
  }

  /** Reads and validates the process environment, `.env` loaded first (the only reader of process.env). */
  static fromEnv(overrides: Record<string, string | undefined> = {}): AppConfig {
    loadEnvFile();
    return new AppConfig(validateEnv({ ...process.env, ...overrides }));
  }
}
