import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { useApi } from './support/api';

type Res = { status: number; body: any };
type Json = Record<string, any>;

/**
 * The served description states the rules the service enforces: a request
 * the schema refuses is refused by the api, and a value the schema accepts is not refused for
 * that field (business rules aside: an unknown group, a cursor this API did not issue).
 */
describe('OpenAPI: the schemas carry the rules the service enforces', () => {
  const { api, t } = useApi({ tenant: true });
  let doc: Json;
  const ajv = new Ajv2020({ strict: false });
  addFormats(ajv);
  const rand = () => Math.random().toString(36).slice(2, 10);

  beforeAll(async () => {
    doc = (await api.http().get('/v1/openapi.json')).body;
  });

  const schemaOf = (name: string): Json => doc.components.schemas[name];
  const prop = (name: string, field: string): Json => schemaOf(name).properties[field];
  const param = (path: string, method: string, name: string): Json => doc.paths[path][method].parameters.find((p: Json) => p.name === name).schema;
  const valid = (schema: Json, value: unknown) => ajv.validate(schema, value) as boolean;
  const post = (path: string, body: object, headers: Record<string, string> = {}): Promise<Res> =>
    api.http().post(path).set(t.auth).set(headers).send(body) as unknown as Promise<Res>;
  /** Walks every schema reachable from request bodies. */
  const requestSchemas = (): Json[] => {
    const seen = new Set<string>();
    const out: Json[] = [];
    const visit = (node: unknown): void => {
      if (Array.isArray(node)) return node.forEach(visit);
      if (!node || typeof node !== 'object') return;
      const n = node as Json;
      if (typeof n.$ref === 'string') {
        const name = n.$ref.split('/').pop()!;
        if (!seen.has(name)) {
          seen.add(name);
          visit(schemaOf(name));
        }
        return;
      }
      out.push(n);
      Object.values(n).forEach(visit);
    };
    for (const item of Object.values(doc.paths) as Json[]) {
      for (const op of Object.values(item) as Json[]) {
        for (const media of Object.values(op.requestBody?.content ?? {}) as Json[]) visit(media.schema);
      }
    }
    return out;
  };
  const types = (s: Json): string[] => (Array.isArray(s.type) ? s.type : [s.type]);

  describe('what the document says', () => {
    it('limit is an integer from 1 to 100; cursor has its length and alphabet, on every list', () => {
      const lists = Object.entries(doc.paths).filter(([, item]: [string, any]) => item.get?.parameters?.some((p: Json) => p.name === 'limit'));
      expect(lists.length).toBeGreaterThanOrEqual(6);
      for (const [path] of lists) {
        expect(param(path, 'get', 'limit')).toMatchObject({ type: 'integer', minimum: 1, maximum: 100 });
        expect(param(path, 'get', 'cursor')).toMatchObject({ type: 'string', minLength: 1, maxLength: 200, pattern: '^[A-Za-z0-9_-]+$' });
      }
    });

    it('Idempotency-Key carries its visible-ASCII pattern and length', () => {
      expect(param('/v1/groups', 'post', 'Idempotency-Key')).toEqual({ type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7E]+$' });
    });

    it('email has its format and the pattern the service checks; names and refs are not blank', () => {
      expect(prop('CreatePersonDto', 'email')).toMatchObject({ type: 'string', format: 'email', maxLength: 254, pattern: expect.any(String) });
      for (const [schema, field] of [
        ['CreateCaseDto', 'external_ref'],
        ['CreateGroupDto', 'name'],
        ['UpdateGroupDto', 'name'],
        ['CreatePersonDto', 'name'],
        ['UpdatePersonDto', 'name'],
        ['DocumentCreateTextDto', 'text'],
      ]) {
        const s = prop(schema, field);
        expect({ schema, field, ok: !valid(s, '   ') && !valid(s, '') && valid(s, ' x ') }).toEqual({ schema, field, ok: true });
      }
    });

    it('no string of a request accepts the NUL character; no array takes more than 1000 values', () => {
      let strings = 0;
      for (const s of requestSchemas()) {
        if (types(s).includes('string') && !s.enum && s.format !== 'binary') {
          strings++;
          expect({ s, nul: valid({ ...s, type: 'string' }, 'a\u0000b') }).toEqual({ s, nul: false });
        }
        if (types(s).includes('array')) expect(s.maxItems).toBeLessThanOrEqual(1000);
      }
      expect(strings).toBeGreaterThan(15);
      for (const item of Object.values(doc.paths) as Json[]) {
        for (const op of Object.values(item) as Json[]) {
          for (const p of op.parameters ?? []) {
            if (p.schema.type === 'string' && !p.schema.enum) expect({ p: p.name, nul: valid(p.schema, 'a\u0000b') }).toEqual({ p: p.name, nul: false });
          }
        }
      }
    });
  });

  describe('the service does what the document says', () => {
    it('limit: 1.5 and 0 are refused with one message that does not contradict itself; 7 is taken', async () => {
      const limit = param('/v1/groups', 'get', 'limit');
      for (const bad of ['1.5', '0', '101', 'x']) {
        expect(valid(limit, Number(bad))).toBe(false);
        const res = await api.http().get(`/v1/groups?limit=${bad}`).set(t.auth);
        expect({ bad, status: res.status, code: res.body.error?.code }).toEqual({ bad, status: 400, code: 'invalid_request' });
        expect(res.body.error.message).toBe('limit: must be an integer from 1 to 100');
      }
      expect(valid(limit, 7)).toBe(true);
      expect((await api.http().get('/v1/groups?limit=7').set(t.auth)).status).toBe(200);
    });

    it('cursor: what the schema refuses is refused; an issued cursor matches the schema', async () => {
      const cursor = param('/v1/groups', 'get', 'cursor');
      for (const bad of ['a'.repeat(201), 'ab$c', 'a\u0000']) {
        expect(valid(cursor, bad)).toBe(false);
        expect(
          (
            await api
              .http()
              .get(`/v1/groups?cursor=${encodeURIComponent(bad)}`)
              .set(t.auth)
          ).status,
        ).toBe(400);
      }
      for (let i = 0; i < 2; i++) expect((await post('/v1/groups', { name: `c-${rand()}` })).status).toBe(201);
      const page = await api.http().get('/v1/groups?limit=1').set(t.auth);
      expect(valid(cursor, page.body.next_cursor)).toBe(true);
    });

    it('Idempotency-Key: what the schema refuses answers 400; a schema-valid key is taken', async () => {
      const ik = param('/v1/groups', 'post', 'Idempotency-Key');
      for (const bad of ['has space', 'é', 'k'.repeat(256)]) {
        expect(valid(ik, bad)).toBe(false);
        const res = await post('/v1/groups', { name: `ik-${rand()}` }, { 'Idempotency-Key': bad });
        expect({ bad, status: res.status }).toEqual({ bad, status: 400 });
      }
      const good = `~!k-${rand()}`;
      expect(valid(ik, good)).toBe(true);
      expect((await post('/v1/groups', { name: `ik-${rand()}` }, { 'Idempotency-Key': good })).status).toBe(201);
    });

    it('email: what the schema refuses answers 422 naming email; schema-valid addresses are not refused for email', async () => {
      const email = prop('CreatePersonDto', 'email');
      for (const bad of ['not-an-email', 'a@b', 'a..b@example.org', 'a@-x.example.org', 'a@example.c0m', '"q"@example.org']) {
        expect({ bad, valid: valid(email, bad) }).toEqual({ bad, valid: false });
        const res = await post('/v1/users', { email: bad });
        expect({ bad, status: res.status, message: res.body.error?.message }).toEqual({ bad, status: 422, message: expect.stringMatching(/^email: /) });
      }
      for (const good of [`ana.lopez+${rand()}@example.org`, `x_${rand()}@mail-1.xn--p1ai`, `O'Brien.${rand()}@Example.ORG`]) {
        expect({ good, valid: valid(email, good) }).toEqual({ good, valid: true });
        const res = await post('/v1/users', { email: good });
        expect({ good, status: res.status }).toEqual({ good, status: expect.any(Number) });
        expect([200, 201, 202]).toContain(res.status);
      }
    });

    it('not blank, no NUL, webhook url, maxItems: what the schema refuses answers 422; what it accepts is taken', async () => {
      const ref = prop('CreateCaseDto', 'external_ref');
      for (const bad of ['  ', 'a\u0000b']) {
        expect(valid(ref, bad)).toBe(false);
        expect((await post('/v1/cases', { external_ref: bad })).status).toBe(422);
      }
      const good = ` r-${rand()} `;
      expect(valid(ref, good)).toBe(true);
      expect((await post('/v1/cases', { external_ref: good })).status).toBe(201);
      const title = prop('CreateCaseDto', 'title');
      expect(valid(title, 'a\u0000')).toBe(false);
      expect((await post('/v1/cases', { external_ref: `r-${rand()}`, title: 'a\u0000' })).status).toBe(422);
      const name = prop('CreateGroupDto', 'name');
      expect(valid(name, ' \t ')).toBe(false);
      expect((await post('/v1/groups', { name: ' \t ' })).status).toBe(422);
      const url = prop('CreateWebhookDto', 'url');
      for (const bad of ['http://hooks.example.com/x', 'https://hooks.example.com:8443/x', 'https://u:p@hooks.example.com/x', 'https://hooks.example.com/#f']) {
        expect({ bad, valid: valid(url, bad) }).toEqual({ bad, valid: false });
        expect({ bad, status: (await post('/v1/webhooks', { url: bad, events: ['conversation.ended'] })).status }).toEqual({ bad, status: 422 });
      }
      const hook = `https://hooks.example.com:443/${rand()}?a=1`;
      expect(valid(url, hook)).toBe(true);
      expect((await post('/v1/webhooks', { url: hook, events: ['conversation.ended'] })).status).toBe(201);
      const permissions = prop('CreateGroupDto', 'permissions');
      expect(valid(permissions, new Array(51).fill('conversations.start'))).toBe(false);
      expect((await post('/v1/groups', { name: `g-${rand()}`, permissions: new Array(51).fill('conversations.start') })).status).toBe(422);
    });
  });
});
