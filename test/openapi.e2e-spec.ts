import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { EVENT_NAMES } from '@kernel/events';
import { makeTenant, useApi } from './support/api';
import { OpenApiChecker } from './support/openapi-check';

const run = promisify(execFile);

describe('GET /v1/openapi.json', () => {
  const { api } = useApi();
  let doc: any;
  beforeAll(async () => {
    doc = (await api.http().get('/v1/openapi.json')).body;
  });

  it('needs no key and describes the API as OpenAPI 3.1.0, version 1.0.0, build 47', async () => {
    const res = await api.http().get('/v1/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['x-request-id']).toBeTruthy();
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.title).toBe('Integrations API');
    expect(doc.info.version).toBe('1.0.0');
    expect(doc.info['x-build']).toBe(47);
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.security).toEqual([{ bearer: [] }]);
  });

  it('is valid against the official OpenAPI 3.1 schema', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'oas-')), 'openapi.json');
    writeFileSync(file, JSON.stringify(doc));
    const cli = require.resolve('@seriousme/openapi-schema-validator/bin/validate-api-cli.js');
    const { stdout } = await run(process.execPath, [cli, file]);
    expect(JSON.parse(stdout)).toMatchObject({ valid: true });
  });

  it('uses the 3.1 form for nullable fields (no `nullable` keyword anywhere)', () => {
    expect(JSON.stringify(doc)).not.toContain('"nullable"');
  });

  it('documents every call with its answers and the common error answers', () => {
    const me = doc.paths['/v1/me'].get;
    // No object named (no 404), and a wrong method or path is no call of this operation (no 405).
    expect(Object.keys(me.responses).sort()).toEqual(['200', '400', '401', '403', '429', '500']);
    expect(Object.keys(doc.paths['/v1/groups/{id}'].get.responses).sort()).toEqual(['200', '400', '401', '403', '404', '429', '500']);
    expect(me.responses['401'].content['application/json'].schema.properties.error.properties.code.enum).toEqual(['unauthorised']);
    expect(doc.paths['/v1/openapi.json']).toBeUndefined(); // served, not described as an operation
    expect(doc.paths['/docs']).toBeUndefined();
  });

  it("lists on each error answer the codes that call can answer: the front door's and its own", () => {
    const codes = (path: string, method: string, status: string): string[] =>
      doc.paths[path][method].responses[status].content['application/json'].schema.properties.error.properties.code.enum;
    // /v1/me needs no scope, so it cannot answer scope_missing; a call that needs one can.
    expect(codes('/v1/me', 'get', '403')).toEqual(['module_off', 'ip_not_allowed']);
    expect(codes('/v1/groups', 'get', '403')).toEqual(['module_off', 'scope_missing', 'ip_not_allowed']);
    expect(codes('/v1/webhooks', 'post', '422').sort()).toEqual(['idempotency_key_reused', 'validation_failed']);
    expect(codes('/v1/webhooks', 'post', '409')).toEqual(['idempotency_key_in_use']);
    expect(codes('/v1/webhooks/{id}/test', 'post', '429')).toEqual(['rate_limited']);
    expect(codes('/v1/documents', 'post', '413').sort()).toEqual(['file_too_large', 'text_too_long']);
  });

  it('names this installation as its server (PUBLIC_BASE_URL)', () => {
    expect(doc.servers).toEqual([{ url: api.config.publicBaseUrl, description: expect.any(String) }]);
  });

  it('has a webhooks section: every event, its body, an example and the Service-Signature header', () => {
    expect(Object.keys(doc.webhooks).sort()).toEqual([...EVENT_NAMES].sort());
    for (const event of EVENT_NAMES) {
      const post = doc.webhooks[event].post;
      const body = doc.components.schemas[post.requestBody.content['application/json'].schema.$ref.split('/').pop()];
      expect(body.required).toEqual(['id', 'event', 'occurred_at', 'data']);
      expect(body.properties.event.const).toBe(event);
      expect(post.requestBody.content['application/json'].example.event).toBe(event);
      expect(post.parameters).toEqual([expect.objectContaining({ name: 'Service-Signature', in: 'header', required: true })]);
    }
    expect(doc.components.schemas.DocumentTranslatedEvent.properties.data.required).toEqual(['document_id', 'case_id', 'language']);
  });

  it('describes SCIM under /scim/v2/ with application/scim+json, the document its discovery points at', async () => {
    expect(doc.paths['/scim/v2/Users'].post.requestBody.content['application/scim+json'].schema).toEqual({ $ref: '#/components/schemas/ScimUser' });
    expect(doc.paths['/scim/v2/Users'].get.responses['200'].content['application/scim+json']).toBeDefined();
    expect(doc.paths['/scim/v2/Groups/{id}'].patch.responses['404'].content['application/scim+json'].schema).toEqual({
      $ref: '#/components/schemas/ScimError',
    });
    const t = await makeTenant(api.app);
    const config = await api.http().get('/scim/v2/ServiceProviderConfig').set(t.auth);
    expect(config.body.documentationUri).toBe(`${api.config.publicBaseUrl}/v1/openapi.json`);
  });

  it('answers match the document', async () => {
    const checker = new OpenApiChecker(doc);
    const t = await makeTenant(api.app);
    const me = await api.http().get('/v1/me').set(t.auth);
    checker.check('GET', '/v1/me', 200, me.body);
    const unauthorised = await api.http().get('/v1/me');
    checker.check('GET', '/v1/me', 401, unauthorised.body);
    expect(() => checker.check('GET', '/v1/me', 200, { data: { ...me.body.data, extra: true } })).toThrow();
  });

  it('has a strong ETag; If-None-Match with it answers 304 with no body, also with Cache-Control: no-cache', async () => {
    const res = await api.http().get('/v1/openapi.json');
    const etag = res.headers.etag;
    expect(etag).toMatch(/^"[0-9a-f]{64}"$/);
    const again = await api.http().get('/v1/openapi.json').set('If-None-Match', etag);
    expect(again.status).toBe(304);
    expect(again.text ?? '').toBe('');
    expect(again.headers.etag).toBe(etag);
    const noCache = await api.http().get('/v1/openapi.json').set('If-None-Match', etag).set('Cache-Control', 'no-cache');
    expect(noCache.status).toBe(304);
    const list = await api.http().get('/v1/openapi.json').set('If-None-Match', `"other", W/${etag}`);
    expect(list.status).toBe(304);
    const stale = await api.http().get('/v1/openapi.json').set('If-None-Match', '"stale"');
    expect(stale.status).toBe(200);
  });

  it("answers 304 to Node's fetch, which sends Cache-Control: no-cache on conditional requests", async () => {
    const first = await fetch(`${api.url}/v1/openapi.json`);
    const etag = first.headers.get('etag')!;
    await first.arrayBuffer();
    const second = await fetch(`${api.url}/v1/openapi.json`, { headers: { 'If-None-Match': etag, 'Cache-Control': 'no-cache' } });
    expect(second.status).toBe(304);
  });
});
