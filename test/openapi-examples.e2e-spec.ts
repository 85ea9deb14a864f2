import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { writeFileSync } from 'node:fs';
import { Agent } from 'node:https';
import { join } from 'node:path';
import request from 'supertest';
import { CasesService } from '@features/cases';
import { ConversationIngestService } from '@features/conversations';
import { OrganisationsService } from '@features/organisations';
import { AppConfig } from '@kernel/config';
import { IdempotencyStore } from '@web/idempotency';
import { operationKey, OperationExamples, recordedExamples } from '@web/openapi';
import { makeTenant, Tenant } from './support/api';
import { scimTenant, ScimTenant, SCIM, patchOp } from './support/scim-client';
import { startWebhookStand, WebhookStand } from './support/webhook-stand';
import { until } from './support/until';

type Json = Record<string, any>;
type Res = { status: number; body: any; text: string; headers: Record<string, string> };

/** Where the document builder reads the examples (libs/web/openapi/openapi-examples.ts). */
const FIXTURE = join(__dirname, '../libs/web/openapi/examples/recorded.json');
const RECORD = process.env.RECORD_OPENAPI_EXAMPLES === '1';

/** Every operation of the served document, as [method, path template, operation]. */
export function operationsOf(doc: Json): Array<[string, string, Json]> {
  return Object.entries(doc.paths as Json).flatMap(([path, item]: [string, Json]) =>
    Object.entries(item)
      .filter(([, op]) => op && typeof op === 'object' && op.responses)
      .map(([method, op]) => [method.toUpperCase(), path, op as Json] as [string, string, Json]),
  );
}

/** ajv over the document's components, so that `$ref`s resolve (JSON Schema 2020-12, as OpenAPI 3.1 says). */
export function schemaValidator(doc: Json): (schema: Json, value: unknown) => string | null {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  const base = 'https://openapi.test/doc.json';
  const rewrite = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(rewrite);
    if (!node || typeof node !== 'object') return node;
    return Object.fromEntries(
      Object.entries(node).map(([k, v]) => [k, k === '$ref' && typeof v === 'string' && v.startsWith('#/') ? `${base}${v}` : rewrite(v)]),
    );
  };
  ajv.addSchema({ $id: base, components: doc.components });
  return (schema, value) => {
    const validate = ajv.compile(rewrite(schema) as Json);
    return validate(value) ? null : ajv.errorsText(validate.errors);
  };
}

/**
 * The description's examples are answers of the real api: this spec drives every operation of the
 * served document through a scenario (api, worker and a webhook receiver, as a partner's run would
 * be), checks each answer against the document, and requires that it reached every operation.
 * With RECORD_OPENAPI_EXAMPLES=1 (`npm run openapi:examples`) it writes what it recorded to the
 * fixture the document builder reads; otherwise it checks that the committed fixture has a request
 * and a success example for every operation, and that every example in the served document and
 * every body a receiver got validates against its schema.
 */
describe('OpenAPI examples: recorded from real answers, on every operation, valid against their schemas', () => {
  let stand: WebhookStand;
  let doc: Json;
  let check: (schema: Json, value: unknown) => string | null;
  const recorded: Record<string, OperationExamples> = {};
  const mismatches: string[] = [];
  /** Operations answered 2xx in this run. */
  const reached = new Set<string>();
  /** The path parameters of each operation's successful call, for the refusals probed afterwards. */
  const liveParams: Record<string, Record<string, string>> = {};
  let tenant: ScimTenant | undefined;
  const probeStats: Record<string, number> = {};
  /** The error codes each operation answered in this run (REST: the envelope's `error.code`). */
  const answered: Record<string, Set<string>> = {};
  /** While the scenario runs, every call of an operation that takes Idempotency-Key sends a fresh one. */
  let keyEveryCall = false;
  /** Of each such operation, its first successful call and the key it sent (for the reuse refused later). */
  const keyed: Record<string, { params: Record<string, string>; key: string }> = {};
  const rand = () => Math.random().toString(36).slice(2, 8);

  beforeAll(async () => {
    stand = await startWebhookStand({});
    doc = (await stand.api.http().get('/v1/openapi.json')).body;
    check = schemaValidator(doc);
  }, 60000);
  afterAll(() => stand?.close(), 60000);

  /** One call as a partner makes it; its answer is checked against the document and recorded. */
  async function call(
    t: Tenant,
    method: string,
    template: string,
    params: Record<string, string> = {},
    body?: unknown,
    headers: Record<string, string | string[]> = {},
    options: { agent?: Agent; build?: (req: request.Test) => request.Test } = {},
  ): Promise<Res> {
    const path = template.replace(/\{([a-z_]+)\}/g, (_, name: string) => encodeURIComponent(params[name]));
    const query = params.query ? `?${params.query}` : '';
    const scim = template.startsWith('/scim/');
    const op = doc.paths[template]?.[method.toLowerCase()];
    if (!op) throw new Error(`${method} ${template} is not in the document`);
    const key = operationKey(method, template);
    let req = request(stand.api.url)[method.toLowerCase() as 'get'](`${path}${query}`).set(t.auth);
    // A call without a valid key comes from an address of its own: 60 refusals from one address in a
    // minute would make every later call answer 429 (the refused-key throttle), hiding the answers probed.
    if (options.agent) req = req.agent(options.agent);
    else if (!/^Bearer svc_[0-9a-f]{64}$/.test(t.auth.Authorization) || t.auth.Authorization.endsWith('0'.repeat(64))) req = req.agent(nextLoopbackAgent());
    if (body instanceof Raw) req = req.set('Content-Type', body.type).send(body.text);
    else if (body !== undefined) req = req.set('Content-Type', scim ? 'application/scim+json' : 'application/json').send(JSON.stringify(body));
    if (options.build) req = options.build(req);
    const idempotent = op.parameters?.some((p: Json) => p.name === 'Idempotency-Key');
    const sentKey = keyEveryCall && idempotent && headers['Idempotency-Key'] === undefined ? `ik-${rand()}${rand()}` : undefined;
    req = req.set(sentKey ? { ...headers, 'Idempotency-Key': sentKey } : headers);
    const res = (await req) as unknown as Res;
    const sk = `${res.status} ${res.body?.error?.code ?? res.body?.scimType ?? ''}`;
    probeStats[sk] = (probeStats[sk] ?? 0) + 1;
    if (res.status >= 400 && typeof res.body?.error?.code === 'string') (answered[key] ??= new Set()).add(res.body.error.code);
    if (sentKey && res.status < 300) keyed[key] ??= { params, key: sentKey };
    const documented = op.responses[String(res.status)];
    const entry = (recorded[key] ??= { responses: {} });
    if (!documented) {
      mismatches.push(`${key} answered ${res.status}, which it does not document: ${res.text}`);
      return res;
    }
    const media = Object.values((documented.content ?? {}) as Json)[0] as Json | undefined;
    if (media) {
      const problem = check(media.schema, res.body);
      if (problem) mismatches.push(`${key} ${res.status}: ${problem}\n${res.text}`);
    }
    if (res.status < 300) {
      reached.add(key);
      liveParams[key] ??= params;
    }
    if (res.status < 300 && body !== undefined && !(body instanceof Raw) && entry.request === undefined) entry.request = body;
    if (media && entry.responses[res.status] === undefined) entry.responses[res.status] = res.body;
    return res;
  }
  const ok = (res: Res, status: number) => {
    expect({ status: res.status, body: res.status === status ? undefined : res.body }).toEqual({ status, body: undefined });
    return res.body;
  };

  it('reaches every operation with a successful call, each answer as the document says', async () => {
    const { api, db, receiver } = stand;
    const t = await scimTenant(api);
    tenant = t;
    await api.app.get(OrganisationsService).setConversationReview(t.organisationId, true);
    keyEveryCall = true;

    // Who am I, and the permissions a group may carry.
    ok(await call(t, 'GET', '/v1/me'), 200);
    const permissions: string[] = ok(await call(t, 'GET', '/v1/permissions'), 200).data.map((p: Json) => p.code);

    // Groups and their permissions.
    const group = ok(await call(t, 'POST', '/v1/groups', {}, { name: 'Interpreters', permissions: permissions.slice(0, 1) }), 201).data;
    ok(await call(t, 'GET', '/v1/groups'), 200);
    ok(await call(t, 'GET', '/v1/groups/{id}', { id: group.id }), 200);
    ok(await call(t, 'PATCH', '/v1/groups/{id}', { id: group.id }, { name: 'Senior interpreters' }), 200);
    ok(await call(t, 'GET', '/v1/groups/{id}/permissions', { id: group.id }), 200);
    ok(await call(t, 'PUT', '/v1/groups/{id}/permissions', { id: group.id }, { permissions: permissions.slice(0, 2) }), 200);
    ok(await call(t, 'POST', '/v1/groups/{id}/permissions', { id: group.id }, { code: permissions[2] }), 200);
    ok(await call(t, 'DELETE', '/v1/groups/{id}/permissions/{code}', { id: group.id, code: permissions[2] }), 200);
    const spare = ok(await call(t, 'POST', '/v1/groups', {}, { name: 'Volunteers' }), 201).data;
    ok(await call(t, 'DELETE', '/v1/groups/{id}', { id: spare.id }), 204);

    // People: one made on the organisation's verified domain, one invited from elsewhere.
    const person = ok(
      await call(t, 'POST', '/v1/users', {}, { email: `ana.lopez@${t.domain}`, name: 'Ana López', job_title: 'Social worker', group_id: group.id }),
      201,
    ).data;
    ok(await call(t, 'POST', '/v1/users', {}, { email: `ana.lopez@${t.domain}` }), 200);
    const invited = ok(await call(t, 'POST', '/v1/users', {}, { email: `sam.okafor-${rand()}@example.org`, name: 'Sam Okafor' }), 202).data;
    ok(await call(t, 'GET', '/v1/users'), 200);
    ok(await call(t, 'GET', '/v1/users/{id}', { id: person.id }), 200);
    ok(await call(t, 'PATCH', '/v1/users/{id}', { id: person.id }, { job_title: 'Team lead' }), 200);
    ok(await call(t, 'GET', '/v1/invitations'), 200);
    ok(await call(t, 'DELETE', '/v1/invitations/{id}', { id: invited.id }), 204);
    const leaver = ok(await call(t, 'POST', '/v1/users', {}, { email: `leaver-${rand()}@${t.domain}`, name: 'Lee Aver' }), 201).data;
    ok(await call(t, 'DELETE', '/v1/users/{id}', { id: leaver.id }), 204);

    // A webhook (the receiver answers 200), before the events it will be sent.
    const hookUrl = `https://127.0.0.1/receiver-${rand()}`;
    const hook = ok(await call(t, 'POST', '/v1/webhooks', {}, { url: hookUrl, events: ['conversation.ended', 'summary.ready'] }), 201).data;
    ok(await call(t, 'GET', '/v1/webhooks'), 200);
    ok(await call(t, 'GET', '/v1/webhooks/{id}', { id: hook.id }), 200);
    ok(await call(t, 'POST', '/v1/webhooks/{id}/test', { id: hook.id }), 200);

    // A case, a conversation in it (started as the member app does), its facts, transcript and summary.
    const kase = ok(
      await call(t, 'POST', '/v1/cases', {}, { external_ref: `CRM-2026-${rand()}`, title: 'Housing benefit appointment', group_id: group.id }),
      201,
    ).data;
    ok(await call(t, 'GET', '/v1/cases'), 200);
    ok(await call(t, 'GET', '/v1/cases/{id}', { id: kase.id }), 200);
    ok(await call(t, 'POST', '/v1/cases/{id}/conversations', { id: kase.id }), 201);
    const ingest = api.app.get(ConversationIngestService);
    const conversation = await ingest.start(kase.id, 'en', 'es');
    await ingest.appendTurn(conversation.id, { speaker: 'caseworker', language: 'en', text: 'When did you move in?', translation: '¿Cuándo se mudó?' });
    await ingest.appendTurn(conversation.id, { speaker: 'client', language: 'es', text: 'En marzo.', translation: 'In March.' });
    await ingest.recordFact(conversation.id, 'Moved in', 'March');
    await ingest.end(conversation.id);
    await ingest.writeSummary(conversation.id, 'The client moved in in March.');
    ok(await call(t, 'GET', '/v1/conversations'), 200);
    ok(await call(t, 'GET', '/v1/conversations/{id}', { id: conversation.id }), 200);
    ok(await call(t, 'GET', '/v1/conversations/{id}/facts', { id: conversation.id }), 200);
    ok(await call(t, 'GET', '/v1/conversations/{id}/transcript', { id: conversation.id }), 200);
    ok(await call(t, 'GET', '/v1/conversations/{id}/summary', { id: conversation.id }), 200);

    // A document to translate (whatever the engine makes of it, the answers are real).
    const document = ok(
      await call(
        t,
        'POST',
        '/v1/documents',
        {},
        { case_id: kase.id, source_language: 'en', target_language: 'es', text: 'Please bring your tenancy agreement.' },
      ),
      202,
    ).data;
    ok(await call(t, 'GET', '/v1/documents/{id}', { id: document.id }), 200);

    // The deliveries of those events, once the worker has delivered them.
    const path = new URL(hookUrl).pathname;
    const bodies = await receiver.waitFor(path, 3, 30000);
    await until(
      async () => (await db.query(`SELECT 1 FROM webhook_deliveries WHERE webhook_id = $1 AND state = 'delivered' AND NOT is_test`, [hook.id])).length >= 2,
      'the events delivered',
    );
    for (const r of bodies) {
      const body = JSON.parse(r.raw);
      const event = doc.webhooks[body.event]?.post;
      expect({ event: body.event, documented: !!event }).toEqual({ event: body.event, documented: true });
      const problem = check(event.requestBody.content['application/json'].schema, body);
      if (problem) mismatches.push(`webhook ${body.event}: ${problem}`);
      const signature = event.parameters.find((p: Json) => p.name === 'Service-Signature');
      expect(String(r.headers['service-signature'])).toMatch(new RegExp(signature.schema.pattern));
    }
    const deliveries = ok(await call(t, 'GET', '/v1/webhooks/{id}/deliveries', { id: hook.id }), 200).data;
    const delivered = deliveries.find((d: Json) => d.event === 'conversation.ended');
    ok(await call(t, 'GET', '/v1/webhooks/{id}/deliveries/{delivery_id}', { id: hook.id, delivery_id: delivered.id }), 200);
    ok(await call(t, 'POST', '/v1/webhooks/{id}/deliveries/{delivery_id}/resend', { id: hook.id, delivery_id: delivered.id }), 202);
    ok(
      await call(t, 'POST', '/v1/webhooks/{id}/recover', { id: hook.id }, { since: new Date(Date.now() - 3600_000).toISOString().replace(/\.\d+Z$/, 'Z') }),
      202,
    );
    ok(await call(t, 'POST', '/v1/webhooks/{id}/rotate-secret', { id: hook.id }, { current_secret: hook.secret, expires_in_seconds: 86400 }), 200);
    ok(await call(t, 'POST', '/v1/webhooks/{id}/enable', { id: hook.id }, {}), 200);
    const old = ok(await call(t, 'POST', '/v1/webhooks', {}, { url: `https://127.0.0.1/old-${rand()}`, events: ['summary.ready'] }), 201).data;
    ok(await call(t, 'DELETE', '/v1/webhooks/{id}', { id: old.id }), 204);

    // SCIM: discovery, then Users and Groups as an identity provider provisions them.
    ok(await call(t, 'GET', '/scim/v2/ServiceProviderConfig'), 200);
    ok(await call(t, 'GET', '/scim/v2/ResourceTypes'), 200);
    ok(await call(t, 'GET', '/scim/v2/ResourceTypes/{name}', { name: 'User' }), 200);
    ok(await call(t, 'GET', '/scim/v2/Schemas'), 200);
    ok(await call(t, 'GET', '/scim/v2/Schemas/{id}', { id: SCIM.user }), 200);
    const userName = `maria.silva@${t.domain}`;
    const user = ok(
      await call(
        t,
        'POST',
        '/scim/v2/Users',
        {},
        {
          schemas: [SCIM.user],
          userName,
          externalId: `idp-${rand()}`,
          name: { givenName: 'Maria', familyName: 'Silva' },
          title: 'Interpreter',
          emails: [{ value: userName, type: 'work', primary: true }],
          active: true,
        },
      ),
      201,
    );
    ok(await call(t, 'GET', '/scim/v2/Users', { query: `filter=${encodeURIComponent(`userName eq "${userName}"`)}` }), 200);
    ok(
      await call(
        t,
        'POST',
        '/scim/v2/Users/.search',
        {},
        { schemas: ['urn:ietf:params:scim:api:messages:2.0:SearchRequest'], filter: `userName eq "${userName}"`, count: 10 },
      ),
      200,
    );
    ok(await call(t, 'GET', '/scim/v2/Users/{id}', { id: user.id }), 200);
    ok(
      await call(
        t,
        'PUT',
        '/scim/v2/Users/{id}',
        { id: user.id },
        {
          schemas: [SCIM.user],
          userName,
          name: { givenName: 'Maria', familyName: 'Silva Santos' },
          title: 'Senior interpreter',
          emails: [{ value: userName, type: 'work', primary: true }],
          active: true,
        },
      ),
      200,
    );
    ok(await call(t, 'PATCH', '/scim/v2/Users/{id}', { id: user.id }, patchOp({ op: 'replace', path: 'title', value: 'Team lead' })), 200);
    const scimGroup = ok(await call(t, 'POST', '/scim/v2/Groups', {}, { schemas: [SCIM.group], displayName: 'Nurses', members: [{ value: user.id }] }), 201);
    ok(await call(t, 'GET', '/scim/v2/Groups', { query: `filter=${encodeURIComponent('displayName eq "Nurses"')}` }), 200);
    ok(
      await call(
        t,
        'POST',
        '/scim/v2/Groups/.search',
        {},
        { schemas: ['urn:ietf:params:scim:api:messages:2.0:SearchRequest'], filter: 'displayName eq "Nurses"' },
      ),
      200,
    );
    ok(await call(t, 'GET', '/scim/v2/Groups/{id}', { id: scimGroup.id }), 200);
    ok(
      await call(t, 'PUT', '/scim/v2/Groups/{id}', { id: scimGroup.id }, { schemas: [SCIM.group], displayName: 'Ward nurses', members: [{ value: user.id }] }),
      200,
    );
    ok(await call(t, 'PATCH', '/scim/v2/Groups/{id}', { id: scimGroup.id }, patchOp({ op: 'remove', path: `members[value eq "${user.id}"]` })), 200);
    ok(await call(t, 'GET', '/v1/provisioning-events'), 200);
    ok(await call(t, 'DELETE', '/scim/v2/Groups/{id}', { id: scimGroup.id }), 204);
    ok(await call(t, 'DELETE', '/scim/v2/Users/{id}', { id: user.id }), 204);

    keyEveryCall = false;

    // One refusal of each operation as a partner meets it first: without a key.
    for (const [method, template] of operationsOf(doc)) {
      const params = Object.fromEntries([...template.matchAll(/\{([a-z_]+)\}/g)].map((m) => [m[1], '1']));
      await call({ ...t, auth: { Authorization: '' } } as never, method, template, params);
    }

    expect(mismatches).toEqual([]);
    const unreached = operationsOf(doc)
      .map(([method, path]) => operationKey(method, path))
      .filter((key) => !reached.has(key));
    expect(unreached).toEqual([]);
    if (RECORD) writeFileSync(FIXTURE, `${JSON.stringify(sortKeys(recorded), null, 2)}\n`);
  }, 180000);

  it("every refusal the service answers is documented: its status on the operation, its code in that status's list", async () => {
    // The live objects of the scenario above; the probes refuse before changing anything, and none deletes.
    if (!tenant) throw new Error('the scenario above makes the tenant: run the whole file');
    const t = tenant;
    const scopeless = await makeTenant(stand.api.app, []);
    const before = mismatches.length;
    const bodies: unknown[] = [{ zz_unknown: 1 }, [], 'text', { name: '' }, { events: ['no.such.event'] }, { permissions: ['no_such'] }];
    for (const [method, template, op] of operationsOf(doc)) {
      const key = operationKey(method, template);
      const live = liveParams[key] ?? {};
      const names = [...template.matchAll(/\{([a-z_]+)\}/g)].map((m) => m[1]);
      const withAll = (value: string) => Object.fromEntries(names.map((n) => [n, value]));
      await call(scopeless, method, template, live);
      await call({ ...t, auth: { Authorization: `Bearer svc_${'0'.repeat(64)}` } }, method, template, live);
      await call({ ...t, auth: { Authorization: 'Basic eDp5' } }, method, template, live);
      if (names.length) {
        await call(t, method, template, withAll('999999999'));
        await call(t, method, template, withAll('abc'));
        await call(t, method, template, withAll('0'));
      }
      if (method === 'DELETE') continue;
      await call(t, method, template, { ...live, query: 'zz_unknown=1' });
      await call(t, method, template, { ...live, query: 'limit=0&cursor=' });
      if (method === 'GET') continue;
      for (const body of bodies) await call(t, method, template, live, body);
      await call(t, method, template, live, new Raw('{"a":', 'application/json'));
      await call(t, method, template, live, new Raw('hello', 'text/plain'));
      if (op.parameters?.some((p: Json) => p.name === 'Idempotency-Key')) {
        await call(t, method, template, live, { zz_unknown: 1 }, { 'Idempotency-Key': 'x'.repeat(300) });
      }
    }
    // The probes reached the answers they are for, not only the front door's.
    for (const answer of ['401 unauthorised', '403 scope_missing', '404 not_found', '400 invalid_request', '422 validation_failed', '400 invalidSyntax']) {
      expect({ answer, seen: (probeStats[answer] ?? 0) > 0 }).toEqual({ answer, seen: true });
    }
    expect(probeStats['429 rate_limited'] ?? 0).toBeLessThan(5);
    expect(mismatches.slice(before)).toEqual([]);
  }, 180000);

  it('provokes, on each operation, the codes it lists that the probes above do not reach', async () => {
    if (!tenant) throw new Error('the scenario above makes the tenant: run the whole file');
    const t = tenant;
    const { api, db } = stand;
    const orgs = api.app.get(OrganisationsService);
    const before = mismatches.length;
    const rest = operationsOf(doc).filter(([, path]) => !path.startsWith('/scim/'));
    const live = (method: string, template: string) => liveParams[operationKey(method, template)] ?? {};

    // The front door's refusals, on every operation: more than one Authorization header (400), the
    // organisation's module off (403), an address outside its allow-list (403), and an address
    // that used up its refused-key allowance this minute (429, valid key or not).
    const off = await makeTenant(api.app);
    await orgs.setModule(off.organisationId, false);
    const fenced = await makeTenant(api.app);
    await orgs.setAllowlist(fenced.organisationId, ['203.0.113.0/24']);
    let throttled = nextLoopbackAgent();
    const burn = async (agent: Agent) => {
      for (let i = 0; i < 60; i++) await request(stand.api.url).get('/v1/me').agent(agent).set('Authorization', 'Bearer nope');
    };
    await burn(throttled);
    for (const [method, template] of rest) {
      const params = live(method, template);
      await call(t, method, template, params, undefined, { Authorization: [t.auth.Authorization, t.auth.Authorization] }, { agent: nextLoopbackAgent() });
      await call(off, method, template, params);
      await call(fenced, method, template, params);
      // The throttle counts by the minute: one that turned meanwhile frees the address, so take another.
      if ((await call(t, method, template, params, undefined, {}, { agent: throttled })).status !== 429) {
        throttled = nextLoopbackAgent();
        await burn(throttled);
        await call(t, method, template, params, undefined, {}, { agent: throttled });
      }
    }

    // Idempotency-Key: a key another request of the connection still holds (409), and the key of a
    // call answered earlier sent with another request (422).
    const store = api.app.get(IdempotencyStore);
    for (const [method, template, op] of rest) {
      if (!op.parameters?.some((p: Json) => p.name === 'Idempotency-Key')) continue;
      const params = live(method, template);
      const held = `held-${rand()}${rand()}`;
      await store.claim(t.connectionId, held, { method, path: template, fingerprint: 'another request' }, 60);
      await call(t, method, template, params, { zz_other: 1 }, { 'Idempotency-Key': held });
      const earlier = keyed[operationKey(method, template)];
      if (earlier) await call(t, method, template, earlier.params, { zz_other: 1 }, { 'Idempotency-Key': earlier.key });
    }

    // Permission codes the API may not grant or take away: organisation.own, on a group of its own.
    const owners = ok(await call(t, 'POST', '/v1/groups', {}, { name: `Owners ${rand()}` }), 201).data;
    await db.query(`UPDATE groups SET permissions = ARRAY['organisation.own'] WHERE id = $1`, [owners.id]);
    const plain = ok(await call(t, 'POST', '/v1/groups', {}, { name: `Plain ${rand()}` }), 201).data;
    const someone = ok(await call(t, 'POST', '/v1/users', {}, { email: `someone-${rand()}@${t.domain}` }), 201).data;
    await call(t, 'POST', '/v1/groups', {}, { name: `Would own ${rand()}`, permissions: ['organisation.own'] });
    await call(t, 'POST', '/v1/groups', {}, { name: `Unknown ${rand()}`, permissions: ['no_such'] });
    await call(t, 'PATCH', '/v1/groups/{id}', { id: plain.id }, { permissions: ['organisation.own'] });
    await call(t, 'PUT', '/v1/groups/{id}/permissions', { id: plain.id }, { permissions: ['organisation.own'] });
    await call(t, 'POST', '/v1/groups/{id}/permissions', { id: plain.id }, { code: 'organisation.own' });
    await call(t, 'POST', '/v1/groups/{id}/permissions', { id: plain.id }, { code: 'no_such' });
    await call(t, 'DELETE', '/v1/groups/{id}/permissions/{code}', { id: owners.id, code: 'organisation.own' });
    await call(t, 'DELETE', '/v1/groups/{id}/permissions/{code}', { id: plain.id, code: 'no_such' });
    await call(t, 'POST', '/v1/users', {}, { email: `owner-${rand()}@${t.domain}`, group_id: owners.id });
    await call(t, 'PATCH', '/v1/users/{id}', { id: someone.id }, { group_id: owners.id });

    // The last person able to manage people, in an organisation of their own: no change may remove them.
    const lone = await scimTenant(api);
    const managers = ok(await call(lone, 'POST', '/v1/groups', {}, { name: 'Managers', permissions: ['people.manage'] }), 201).data;
    const manager = ok(await call(lone, 'POST', '/v1/users', {}, { email: `manager@${lone.domain}`, group_id: managers.id }), 201).data;
    await call(lone, 'PATCH', '/v1/groups/{id}', { id: managers.id }, { permissions: [] });
    await call(lone, 'PUT', '/v1/groups/{id}/permissions', { id: managers.id }, { permissions: [] });
    await call(lone, 'DELETE', '/v1/groups/{id}/permissions/{code}', { id: managers.id, code: 'people.manage' });
    await call(lone, 'DELETE', '/v1/groups/{id}', { id: managers.id });
    await call(lone, 'PATCH', '/v1/users/{id}', { id: manager.id }, { disabled: true });
    await call(lone, 'DELETE', '/v1/users/{id}', { id: manager.id });

    // A person of that other organisation, a group holding a case, a closed case.
    await call(t, 'POST', '/v1/users', {}, { email: `manager@${lone.domain}` });
    const held = ok(await call(t, 'POST', '/v1/groups', {}, { name: `Holding ${rand()}` }), 201).data;
    const kase = ok(await call(t, 'POST', '/v1/cases', {}, { external_ref: `HELD-${rand()}`, group_id: held.id }), 201).data;
    await call(t, 'DELETE', '/v1/groups/{id}', { id: held.id });
    await api.app.get(CasesService).close(kase.id);
    await call(t, 'POST', '/v1/cases/{id}/conversations', { id: kase.id });

    // Documents past the limits, and a file of no supported type.
    const open = ok(await call(t, 'POST', '/v1/cases', {}, { external_ref: `DOCS-${rand()}` }), 201).data;
    const config = api.app.get(AppConfig);
    const toTranslate = { case_id: open.id, source_language: 'en', target_language: 'es' };
    await call(t, 'POST', '/v1/documents', {}, { ...toTranslate, text: 'a'.repeat(config.documentMaxTextChars + 1) });
    const upload = (content: Buffer, filename: string) => (req: request.Test) =>
      req.field('case_id', open.id).field('target_language', 'es').attach('file', content, { filename });
    await call(t, 'POST', '/v1/documents', {}, undefined, {}, { build: upload(Buffer.alloc(config.documentMaxFileBytes + 1, 'a'), 'big.txt') });
    await call(t, 'POST', '/v1/documents', {}, undefined, {}, { build: upload(Buffer.from([0x4d, 0x5a, 0x90, 0x00, 0x03, 0xff]), 'tool.exe') });

    expect(mismatches.slice(before)).toEqual([]);
  }, 180000);

  it('lists on each operation only codes it can answer: each was answered in this run, or is set apart below with the reason', () => {
    const missing: string[] = [];
    const listedAnywhere = new Set<string>();
    for (const [method, path, op] of operationsOf(doc)) {
      // SCIM answers RFC 7644's error schema, which lists no codes.
      if (path.startsWith('/scim/')) continue;
      const key = operationKey(method, path);
      for (const [status, r] of Object.entries(op.responses as Json)) {
        if (Number(status) < 400) continue;
        const codes: string[] = (r as Json).content?.['application/json']?.schema?.properties?.error?.properties?.code?.enum ?? [];
        for (const code of codes) {
          listedAnywhere.add(`${key} ${code}`);
          if (answered[key]?.has(code) || unprovoked(key, code)) continue;
          missing.push(`${key} ${status} ${code}`);
        }
      }
    }
    expect(missing).toEqual([]);
    // Each entry set apart still names a code some operation lists (none left over from a change).
    for (const { operation, code } of NOT_PROVOKED) {
      const names = [...listedAnywhere].some((l) => l.endsWith(` ${code}`) && (operation === '*' || l === `${operation} ${code}`));
      expect({ operation, code, listed: names }).toEqual({ operation, code, listed: true });
    }
  });

  it('the committed examples cover every operation: a success answer, and the request where it takes a body', () => {
    const examples = recordedExamples();
    const missing: string[] = [];
    for (const [method, path, op] of operationsOf(doc)) {
      const key = operationKey(method, path);
      const e = examples[key];
      // A success answer with a body (204 has none) shows a recorded one.
      const success = Object.entries(op.responses as Json).filter(([s, r]: [string, Json]) => Number(s) < 300 && r.content);
      if (success.length && !success.some(([s]) => e?.responses[s] !== undefined)) missing.push(`${key}: no success answer recorded`);
      if (success.length && !success.some(([, r]) => Object.values((r as Json).content as Json).some((m: Json) => m.example !== undefined))) {
        missing.push(`${key}: the document shows no answer example`);
      }
      if (op.requestBody?.content?.['application/json'] && e?.request === undefined) missing.push(`${key}: no request body`);
    }
    expect(missing).toEqual([]);
  });

  it('every example in the served document validates against its schema (operations, parameters and webhooks)', () => {
    const problems: string[] = [];
    const media = (where: string, content: Json | undefined) => {
      for (const [type, m] of Object.entries(content ?? {}) as Array<[string, Json]>) {
        if (m.example === undefined || !m.schema) continue;
        const problem = check(m.schema, m.example);
        if (problem) problems.push(`${where} ${type}: ${problem}`);
      }
    };
    let examples = 0;
    const items: Array<[string, Json]> = [
      ...Object.entries(doc.paths as Json).map(([p, item]) => [p, item] as [string, Json]),
      ...Object.entries(doc.webhooks as Json).map(([e, item]) => [`webhook ${e}`, item] as [string, Json]),
    ];
    for (const [where, item] of items) {
      for (const [method, op] of Object.entries(item) as Array<[string, Json]>) {
        if (!op?.responses) continue;
        media(`${method} ${where} request`, op.requestBody?.content);
        for (const [status, r] of Object.entries(op.responses as Json)) media(`${method} ${where} ${status}`, (r as Json).content);
        for (const p of (op.parameters ?? []) as Json[]) {
          if (p.example === undefined) continue;
          const problem = check(p.schema, p.example);
          if (problem) problems.push(`${method} ${where} parameter ${p.name}: ${problem}`);
        }
      }
    }
    JSON.stringify(doc, (k, v) => {
      if (k === 'example') examples++;
      return v;
    });
    expect(examples).toBeGreaterThan(operationsOf(doc).length);
    expect(problems).toEqual([]);
  });
});

/**
 * Codes an operation lists and can answer that this spec does not provoke, each with why, and the
 * spec that shows the answer instead. `*`: every operation.
 */
const NOT_PROVOKED: Array<{ operation: string; code: string; why: string }> = [
  {
    operation: '*',
    code: 'server_error',
    why: 'an unexpected error (a fault, Postgres away): nothing a caller can send makes one; test/common-rules.e2e-spec.ts shows the answer on a route made to throw',
  },
];

const unprovoked = (key: string, code: string) => NOT_PROVOKED.some((n) => n.code === code && (n.operation === '*' || n.operation === key));

let loopback = 0;
/** An HTTPS agent whose connections leave from the next loopback address (127.0.1.1, 127.0.1.2, …). */
function nextLoopbackAgent(): Agent {
  loopback++;
  return new Agent({ localAddress: `127.0.${1 + Math.floor(loopback / 250)}.${1 + (loopback % 250)}`, rejectUnauthorized: false, keepAlive: false });
}

/** A body sent as it is, in its own content type (the probes' malformed bodies). */
class Raw {
  constructor(
    readonly text: string,
    readonly type: string,
  ) {}
}

/** The fixture in a stable order (operations by key), so that a re-recording diffs by content. */
function sortKeys(recorded: Record<string, OperationExamples>): Record<string, OperationExamples> {
  return Object.fromEntries(
    Object.keys(recorded)
      .sort()
      .map((k) => [k, recorded[k]]),
  );
}
