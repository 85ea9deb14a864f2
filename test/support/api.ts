import 'reflect-metadata';
import { Type } from '@nestjs/common';
import { NestExpressApplication } from '@nestjs/platform-express';
import { AppConfig } from '@kernel/config';
import { Scope, SCOPES } from '@kernel/core';
import { ApiKeysService, ConnectionsService } from '@features/connections';
import { OrganisationsService } from '@features/organisations';
import { AddressInfo } from 'node:net';
import request from 'supertest';
import { MailCatcher } from './mail-catcher';
import { freePort } from './private-servers';
import { createApiApp } from '../../apps/api/src/bootstrap';

export interface TestApi {
  app: NestExpressApplication;
  url: string;
  config: AppConfig;
  http: () => request.Agent;
  close: () => Promise<void>;
}

/** The real api, in process, listening on an HTTPS port on 127.0.0.1 (ephemeral unless `port` is given). */
export async function startApi(env: Record<string, string> = {}, extraModules: Type<unknown>[] = [], port = 0): Promise<TestApi> {
  // The metrics port too is a free one unless a spec names it (tests and other runs share the machine).
  const config = AppConfig.fromEnv({ METRICS_PORT: '0', ...env });
  const app = await createApiApp(config, extraModules);
  await app.listen(port, '127.0.0.1');
  const url = `https://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
  return { app, url, config, http: () => request.agent(url), close: () => app.close() };
}

/**
 * The real api on a free port named in PORT and PUBLIC_BASE_URL, so the links it writes (sign-in
 * links, the console's own addresses) lead back to it: its `url` is then its public address.
 */
export async function startApiAtOwnAddress(env: Record<string, string> = {}, extraModules: Type<unknown>[] = []): Promise<TestApi> {
  const port = await freePort();
  return startApi({ ...env, PORT: String(port), PUBLIC_BASE_URL: `https://127.0.0.1:${port}` }, extraModules, port);
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

export interface UseApiOptions {
  /** Settings over the test defaults (test/support/env.ts); a function is read in beforeAll, after the hooks before it. */
  env?: Record<string, string> | (() => Record<string, string>);
  /** Extra Nest modules, e.g. ProbeRoutesModule. */
  modules?: Type<unknown>[];
  /** Also make a tenant (organisation, connection, key) once the api is up. */
  tenant?: boolean;
  /** Also start a MailCatcher before the api (its SMTP_URL) and stop it after the api. */
  mail?: boolean;
  /** Start it with startApiAtOwnAddress: `api.url` is then its public address. */
  ownAddress?: boolean;
  /** Run in afterAll while the api is still up (e.g. retiring deliveries through its database). */
  beforeClose?: () => Promise<unknown>;
  /** The limit of the start and the close (default: the spec's test timeout). */
  hookTimeout?: number;
}

/**
 * The preamble of a spec that talks to one api: starts it (and a tenant) in beforeAll, closes it
 * in afterAll, both registered in the calling describe. The answer's `api` and `t` read through to
 * what beforeAll made, so a spec writes `const { api, t } = useApi({ tenant: true })` and uses them
 * in its tests and hooks as it would the started ones; read outside a hook or test, they throw.
 */
export function useApi(options: UseApiOptions = {}): { api: TestApi; t: Tenant; mail: MailCatcher } {
  let started: TestApi | undefined;
  let tenant: Tenant | undefined;
  const mail = new MailCatcher();
  beforeAll(async () => {
    const env = { ...(typeof options.env === 'function' ? options.env() : options.env) };
    if (options.mail) env.SMTP_URL = await mail.start();
    started = await (options.ownAddress ? startApiAtOwnAddress : startApi)(env, options.modules ?? []);
    if (options.tenant) tenant = await makeTenant(started.app);
  }, options.hookTimeout);
  // The api goes before the mail catcher, whose stop waits for the api's SMTP connections to end.
  afterAll(async () => {
    try {
      if (started) await options.beforeClose?.();
    } finally {
      await started?.close();
      if (options.mail) await mail.stop();
    }
  }, options.hookTimeout);
  const live = (): TestApi => started ?? fail('the api is started in beforeAll: use it in a hook or a test');
  const made = (): Tenant =>
    tenant ?? fail(options.tenant ? 'the tenant is made in beforeAll: use it in a hook or a test' : 'useApi({ tenant: true }) makes the tenant');
  const api: TestApi = {
    get app() {
      return live().app;
    },
    get url() {
      return live().url;
    },
    get config() {
      return live().config;
    },
    http: () => live().http(),
    close: () => live().close(),
  };
  const t: Tenant = {
    get organisationId() {
      return made().organisationId;
    },
    get connectionId() {
      return made().connectionId;
    },
    get keyId() {
      return made().keyId;
    },
    get key() {
      return made().key;
    },
    get auth() {
      return made().auth;
    },
  };
  return { api, t, mail };
}

function fail(message: string): never {
  throw new Error(message);
}
