// Test processes: quiet logs, and trust the api's self-signed certificate on loopback only.
process.env.NODE_ENV = 'test';
process.env.LOG_LEVEL = process.env.TEST_LOG_LEVEL ?? 'silent';
process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
