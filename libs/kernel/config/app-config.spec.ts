import { AppConfig } from './app-config';
import { ConfigError, startupFailureText } from './config-error';

describe('AppConfig', () => {
  it('reads defaults and typed values', () => {
    const c = AppConfig.fromEnv({ PORT: '9443', TRUSTED_PROXIES: '10.0.0.0/8, 127.0.0.1/32', AUTH_CACHE_TTL_SECONDS: '0' });
    expect(c.port).toBe(9443);
    expect(c.trustedProxies).toEqual(['10.0.0.0/8', '127.0.0.1/32']);
    expect(c.authCacheTtlSeconds).toBe(0);
    expect(c.webhookRetryScale).toBe(1);
  });

  it('puts the private ports on METRICS_HOST, HOST when it is unset or empty', () => {
    expect(AppConfig.fromEnv({ HOST: '10.0.0.5', METRICS_HOST: '127.0.0.1' }).metrics.host).toBe('127.0.0.1');
    expect(AppConfig.fromEnv({ HOST: '10.0.0.5', METRICS_HOST: '' }).metrics.host).toBe('10.0.0.5');
    expect(AppConfig.fromEnv({ HOST: '10.0.0.5', METRICS_HOST: undefined }).metrics.host).toBe('10.0.0.5');
  });

  it('refuses bad values with one message naming each', () => {
    expect(() => AppConfig.fromEnv({ PORT: 'eighty', LOG_LEVEL: 'loud' })).toThrow(/PORT[\s\S]*LOG_LEVEL|LOG_LEVEL[\s\S]*PORT/);
    expect(() => AppConfig.fromEnv({ WEBHOOK_ALLOWED_PRIVATE_CIDRS: '10.0.0.0/33' })).toThrow(/not a CIDR: 10.0.0.0\/33/);
    expect(() => AppConfig.fromEnv({ TRUSTED_PROXIES: 'proxy.local' })).toThrow(/not a CIDR: proxy.local/);
    // A value the mail or translation client would only trip over at its first use.
    expect(() => AppConfig.fromEnv({ SMTP_URL: 'None' })).toThrow(/SMTP_URL: must be an smtp:\/\/ or smtps:\/\/ URL/);
    expect(() => AppConfig.fromEnv({ TRANSLATION_ENGINE_URL: 'libretranslate:5000' })).toThrow(
      /TRANSLATION_ENGINE_URL: must be an http:\/\/ or https:\/\/ URL/,
    );
    expect(AppConfig.fromEnv({ SMTP_URL: 'smtp://127.0.0.1:2525', TRANSLATION_ENGINE_URL: 'http://127.0.0.1:5000' }).smtpUrl).toBe('smtp://127.0.0.1:2525');
  });

  it('says the api serves its self-signed certificate unless TLS_CERT_FILE and TLS_KEY_FILE are both given', () => {
    expect(AppConfig.fromEnv({ TLS_CERT_FILE: '', TLS_KEY_FILE: '' }).selfSignedTls).toBe(true);
    expect(AppConfig.fromEnv({ TLS_CERT_FILE: '/etc/tls/api.crt', TLS_KEY_FILE: '' }).selfSignedTls).toBe(true);
    expect(AppConfig.fromEnv({ TLS_CERT_FILE: '/etc/tls/api.crt', TLS_KEY_FILE: '/etc/tls/api.key' }).selfSignedTls).toBe(false);
  });

  it('refuses a bad setting with a ConfigError, which an entry point prints without its stack', () => {
    for (const env of [{ PORT: 'eighty' }, { REDIS_URL: 'localhost:6379' }, { REDIS_SENTINELS: 'nohost' }, { TRUSTED_PROXIES: 'proxy.local' }]) {
      let thrown: unknown;
      try {
        AppConfig.fromEnv(env);
      } catch (err) {
        thrown = err;
      }
      expect(thrown).toBeInstanceOf(ConfigError);
      const text = startupFailureText(thrown);
      expect(text).toMatch(/^Invalid configuration:\n {2}[A-Z_]+/);
      expect(text).not.toMatch(/\n\s+at /);
    }
    // Anything else keeps its stack: a bug is not a setting.
    expect(startupFailureText(new TypeError('boom'))).toMatch(/^TypeError: boom\n\s+at /);
  });

  it('refuses the tests-only retry scale in production', () => {
    expect(AppConfig.fromEnv({ WEBHOOK_RETRY_SCALE: '0.001' }).webhookRetryScale).toBe(0.001);
    expect(() => AppConfig.fromEnv({ WEBHOOK_RETRY_SCALE: '0.001', NODE_ENV: 'production' })).toThrow(/refused when NODE_ENV=production/);
  });

  it('takes a direct database connection, DATABASE_URL by default, and names prepared statements only on it (auto)', () => {
    const pooled = 'postgres://app@pgbouncer:6432/integrations';
    const direct = 'postgres://app@postgres:5432/integrations';
    const alone = AppConfig.fromEnv({ DATABASE_URL: direct, DATABASE_DIRECT_URL: '' });
    expect([alone.databaseDirectUrl, alone.databasePreparedStatements]).toEqual([direct, true]);
    const split = AppConfig.fromEnv({ DATABASE_URL: pooled, DATABASE_DIRECT_URL: direct });
    expect([split.databaseUrl, split.databaseDirectUrl, split.databasePreparedStatements]).toEqual([pooled, direct, false]);
    expect(AppConfig.fromEnv({ DATABASE_URL: pooled, DATABASE_DIRECT_URL: direct, DATABASE_PREPARED_STATEMENTS: 'true' }).databasePreparedStatements).toBe(
      true,
    );
    expect(AppConfig.fromEnv({ DATABASE_URL: direct, DATABASE_PREPARED_STATEMENTS: 'false' }).databasePreparedStatements).toBe(false);
    expect(() => AppConfig.fromEnv({ DATABASE_PREPARED_STATEMENTS: 'sometimes' })).toThrow(/DATABASE_PREPARED_STATEMENTS/);
  });

  it('takes the tests-only schedule period, within bounds, and refuses it in production', () => {
    expect(AppConfig.fromEnv({}).scheduleEveryMs).toBeUndefined();
    expect(AppConfig.fromEnv({ SCHEDULE_EVERY_MS: '1000' }).scheduleEveryMs).toBe(1000);
    expect(() => AppConfig.fromEnv({ SCHEDULE_EVERY_MS: '50' })).toThrow(/SCHEDULE_EVERY_MS/);
    expect(() => AppConfig.fromEnv({ SCHEDULE_EVERY_MS: '1000', NODE_ENV: 'production' })).toThrow(/SCHEDULE_EVERY_MS: is for tests only/);
  });

  it('points member-app links at the api’s own stand-in unless MEMBER_APP_BASE_URL names the member app', () => {
    const standIn = AppConfig.fromEnv({ PUBLIC_BASE_URL: 'https://api.example.org/' });
    expect([standIn.memberAppBaseUrl, standIn.memberAppStandIn]).toEqual(['https://api.example.org/member-app', true]);
    const real = AppConfig.fromEnv({ MEMBER_APP_BASE_URL: 'https://app.example.org/' });
    expect([real.memberAppBaseUrl, real.memberAppStandIn]).toEqual(['https://app.example.org', false]);
    expect(() => AppConfig.fromEnv({ MEMBER_APP_BASE_URL: 'app.example.org' })).toThrow(/MEMBER_APP_BASE_URL/);
  });
});
