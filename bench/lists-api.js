#!/usr/bin/env node
// The built api (dist/) as bench/lists.bench.js's child process: what dist/apps/api/src/main.js
// does, plus the cases and conversations modules (and their domain services) for as long as
// ApiModule and DomainModule do not include them yet. Once they do, this adds nothing.
'use strict';
require('reflect-metadata');
const path = require('node:path');
const { Global, Module } = require('@nestjs/common');
const { MODULE_METADATA } = require('@nestjs/common/constants');

const dist = (p) => require(path.resolve(__dirname, '..', process.env.BENCH_DIST || 'dist', p));
const { AppConfig } = dist('libs/config/src');
const { DomainModule } = dist('libs/domain/src');
const { ApiModule } = dist('apps/api/src/api.module');
const { createApiApp } = dist('apps/api/src/bootstrap');
const { CasesModule } = dist('apps/api/src/cases/cases.module');
const { ConversationsModule } = dist('apps/api/src/conversations/conversations.module');
const { CasesService } = dist('libs/domain/src/cases/cases.service');
const { ConversationsService } = dist('libs/domain/src/conversations/conversations.service');

async function main() {
  const config = AppConfig.fromEnv();
  const imported = ApiModule.forRoot(config).imports;
  const provided = Reflect.getMetadata(MODULE_METADATA.PROVIDERS, DomainModule) ?? [];
  const services = [CasesService, ConversationsService].filter((s) => !provided.includes(s));
  class PendingDomainProviders {}
  Global()(PendingDomainProviders);
  Module({ providers: services, exports: services })(PendingDomainProviders);
  const extra = [PendingDomainProviders, ...[CasesModule, ConversationsModule].filter((m) => !imported.includes(m))];
  const app = await createApiApp(config, extra);
  await app.listen(config.port, config.host);
  process.stdout.write(`lists api listening on https://${config.host}:${config.port} (added: ${extra.map((m) => m.name).join(', ')})\n`);
}

main().catch((err) => {
  process.stderr.write(`lists api failed to start: ${err && err.stack ? err.stack : String(err)}\n`);
  process.exit(1);
});
