#!/usr/bin/env node
'use strict';
// Writes the OpenAPI document the api serves to a file (default: dist/openapi.json), built by the
// same code the api runs at start (createApiApp and its OpenApiDocument), without listening on any
// port. It needs the build (`npm run build`) and the api's Postgres and Redis, as the api does.
// Usage: node scripts/openapi-write.js [file]
const { mkdirSync, writeFileSync } = require('node:fs');
const path = require('node:path');

/** The served document, built from dist/ without listening on any port (also scripts/sdk.js's source). */
async function servedDocument() {
  process.env.LOG_LEVEL = process.env.LOG_LEVEL ?? 'silent';
  require('reflect-metadata');
  const { createApiApp } = require('../dist/apps/api/src/bootstrap');
  const { AppConfig } = require('../dist/libs/kernel/config');
  const { OpenApiDocument } = require('../dist/libs/web/openapi');
  const app = await createApiApp(AppConfig.fromEnv({ METRICS_PORT: '0' }));
  try {
    return JSON.parse(app.get(OpenApiDocument).json);
  } finally {
    await app.close();
  }
}

async function main() {
  const out = path.resolve(process.argv[2] ?? 'dist/openapi.json');
  const document = await servedDocument();
  mkdirSync(path.dirname(out), { recursive: true });
  writeFileSync(out, `${JSON.stringify(document, null, 2)}\n`);
  process.stdout.write(`${path.relative(process.cwd(), out)}\n`);
}

module.exports = { servedDocument };

if (require.main === module) {
  main().catch((err) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  });
}
