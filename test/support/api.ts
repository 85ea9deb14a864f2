import 'reflect-metadata';
import { Type } from '@nestjs/common';
import { NestExpressApplication } from '@nestjs/platform-express';
import { AppConfig } from '@app/config';
import { Scope, SCOPES } from '@app/core';
import { ApiKeysService, ConnectionsService, OrganisationsService } from '@app/domain';
import { AddressInfo } from 'node:net';
import request from 'supertest';
import { createApiApp } from '../../apps/api/src/bootstrap';

export interface TestApi {
  app: NestExpressApplication;
  url: string;
  config: AppConfig;
  http: () => request.Agent;
  close: () => Promise<void>;
}

/** The real api, in process, listening on an ephemeral HTTPS port on 127.0.0.1. */
export async function startApi(env: Record<string, string> = {}, extraModules: Type<unknown>[] = []): Promise<TestApi> {
  const config = AppConfig.fromEnv(env);
  const app = await createApiApp(config, extraModules);
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as AddressInfo;
  const url = `https://127.0.0.1:${port}`;
  return { app, url, config, http: () => request.agent(url), close: () => app.close() };
}

export interface Tenant {
  organisationId: string;
  connectionId: string;
  keyId: string;
  key: string;
  auth: { Authorization: string };
}

/** A fresh organisation with one connection and one key: tests never share data. */
export async function makeTenant(app: NestExpressApplication, scopes: readonly Scope[] = SCOPES, name = 'Test org'): Promise<Tenant> {
  const org = await app.get(OrganisationsService).create(`${name} ${Math.random().toString(36).slice(2, 8)}`);
  const conn = await app.get(ConnectionsService).create(org.id, 'Test connection', [...scopes]);
  const key = await app.get(ApiKeysService).create(conn.id);
  return { organisationId: org.id, connectionId: conn.id, keyId: key.id, key: key.key, auth: { Authorization: `Bearer ${key.key}` } };
}
