import { DomainError, Scope } from '@kernel/core';
import { TransactionHost } from '@kernel/database';
import { CasesService } from '@features/cases';
import { ConversationIngestService } from '@features/conversations';
import { OrganisationsService } from '@features/organisations';
import { DataSource } from 'typeorm';
import { makeTenant, Tenant, useApi } from './support/api';
import { OpenApiChecker } from './support/openapi-check';

type Res = { status: number; body: any; headers: Record<string, string> };

describe('Conversations', () => {
  const { api, t } = useApi({ tenant: true });
  let db: DataSource;
  let doc: any;
  let checker: OpenApiChecker;
  let ingest: ConversationIngestService;
  const rand = () => Math.random().toString(36).slice(2, 10);

  beforeAll(async () => {
    db = api.app.get(DataSource);
    doc = (await api.http().get('/v1/openapi.json')).body;
    checker = new OpenApiChecker(doc);
    ingest = api.app.get(ConversationIngestService);
  });

  const get = (tenant: Tenant, path: string): Promise<Res> => api.http().get(path).set(tenant.auth) as unknown as Promise<Res>;
  const expectError = (res: Res, status: number, code: string, template: string) => {
    expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
    checker.check('GET', template, status, res.body);
  };
  const openCase = async (tenant: Tenant) => (await api.app.get(CasesService).open(tenant.organisationId, { externalRef: `REF-${rand()}` })).case;
  const start = async (tenant: Tenant, langs: [string, string] = ['en', 'es']) => ingest.start((await openCase(tenant)).id, ...langs);
  const outbox = async (conversationId: string) =>
    db.query(`SELECT organisation_id, event, data FROM outbox_events WHERE data->>'conversation_id' = $1 ORDER BY occurred_at, id`, [conversationId]);
  const rejection = async (p: Promise<unknown>) => {
    const err = await p.then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(DomainError);
    return err as DomainError;
  };

  it('GET /v1/conversations/{id} answers every field of Conversation', async () => {
    const c = await start(t);
    expect(c.id).toMatch(/^[0-9a-f]{32}$/);
    const res = await get(t, `/v1/conversations/${c.id}`);
    expect(res.status).toBe(200);
    checker.check('GET', '/v1/conversations/{id}', 200, res.body);
    expect(res.body.data).toEqual({
      id: c.id,
      case_id: c.caseId,
      language_a: 'en',
      language_b: 'es',
      status: 'active',
      started_at: expect.stringMatching(/Z$/),
      ended_at: null,
      created_at: expect.stringMatching(/Z$/),
      updated_at: expect.stringMatching(/Z$/),
    });
    await ingest.end(c.id);
    const ended = await get(t, `/v1/conversations/${c.id}`);
    checker.check('GET', '/v1/conversations/{id}', 200, ended.body);
    expect(ended.body.data).toMatchObject({ status: 'ended', ended_at: expect.stringMatching(/Z$/) });
  });

  it('GET /v1/conversations lists newest first, by cursor', async () => {
    const tenant = await makeTenant(api.app);
    const made = [];
    for (let i = 0; i < 5; i++) {
      made.push(await start(tenant));
      await new Promise((r) => setTimeout(r, 3));
    }
    const expected = made.sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : -1)).map((c) => c.id);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await get(tenant, `/v1/conversations?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.status).toBe(200);
      checker.check('GET', '/v1/conversations', 200, res.body);
      expect(res.body.data.length).toBeLessThanOrEqual(2);
      seen.push(...res.body.data.map((c: { id: string }) => c.id));
      cursor = res.body.next_cursor;
    } while (cursor);
    expect(seen).toEqual(expected);
  });

  it('GET /v1/conversations/{id}/transcript answers every turn in order, in both languages', async () => {
    const c = await start(t, ['en', 'pt-BR']);
    await ingest.appendTurn(c.id, { speaker: 'caseworker', language: 'en', text: 'Good morning.', translation: 'Bom dia.' });
    await ingest.appendTurn(c.id, { speaker: 'client', language: 'pt-BR', text: 'Preciso de ajuda.', translation: 'I need help.' });
    await ingest.appendTurn(c.id, { speaker: 'caseworker', language: 'en', text: 'Of course.', translation: 'Claro.' });
    const res = await get(t, `/v1/conversations/${c.id}/transcript`);
    expect(res.status).toBe(200);
    checker.check('GET', '/v1/conversations/{id}/transcript', 200, res.body);
    expect(Object.keys(res.body)).toEqual(['data']);
    expect(res.body.data).toEqual([
      {
        seq: 1,
        speaker: 'caseworker',
        language: 'en',
        text: 'Good morning.',
        translation: { language: 'pt-BR', text: 'Bom dia.' },
        spoken_at: expect.stringMatching(/Z$/),
      },
      {
        seq: 2,
        speaker: 'client',
        language: 'pt-BR',
        text: 'Preciso de ajuda.',
        translation: { language: 'en', text: 'I need help.' },
        spoken_at: expect.stringMatching(/Z$/),
      },
      {
        seq: 3,
        speaker: 'caseworker',
        language: 'en',
        text: 'Of course.',
        translation: { language: 'pt-BR', text: 'Claro.' },
        spoken_at: expect.stringMatching(/Z$/),
      },
    ]);
    const empty = await get(t, `/v1/conversations/${(await start(t)).id}/transcript`);
    checker.check('GET', '/v1/conversations/{id}/transcript', 200, empty.body);
    expect(empty.body).toEqual({ data: [] });
  });

  it('turns appended concurrently get consecutive seq numbers', async () => {
    const c = await start(t);
    await Promise.all(Array.from({ length: 6 }, (_, i) => ingest.appendTurn(c.id, { speaker: 's', language: 'en', text: `t${i}`, translation: `t${i}` })));
    const res = await get(t, `/v1/conversations/${c.id}/transcript`);
    expect(res.body.data.map((x: { seq: number }) => x.seq)).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('GET /v1/conversations/{id}/facts answers the facts in the order recorded', async () => {
    const c = await start(t);
    await ingest.recordFact(c.id, 'Date of birth', '1984-03-02');
    await ingest.recordFact(c.id, 'Appointment', '2026-12-03 10:00');
    const res = await get(t, `/v1/conversations/${c.id}/facts`);
    expect(res.status).toBe(200);
    checker.check('GET', '/v1/conversations/{id}/facts', 200, res.body);
    expect(res.body).toEqual({
      data: [
        { id: expect.stringMatching(/^\d+$/), label: 'Date of birth', value: '1984-03-02', recorded_at: expect.stringMatching(/Z$/) },
        { id: expect.stringMatching(/^\d+$/), label: 'Appointment', value: '2026-12-03 10:00', recorded_at: expect.stringMatching(/Z$/) },
      ],
    });
  });

  it('summary: 404 saying review is off where it is off; 404 "no summary yet"; then the summary and its rewrites', async () => {
    const tenant = await makeTenant(api.app);
    const c = await start(tenant);
    const off = await get(tenant, `/v1/conversations/${c.id}/summary`);
    expectError(off, 404, 'not_found', '/v1/conversations/{id}/summary');
    expect(off.body.error.message).toMatch(/conversation review is off/i);
    await api.app.get(OrganisationsService).setConversationReview(tenant.organisationId, true);
    const none = await get(tenant, `/v1/conversations/${c.id}/summary`);
    expectError(none, 404, 'not_found', '/v1/conversations/{id}/summary');
    expect(none.body.error.message).toMatch(/no summary yet/i);
    await ingest.writeSummary(c.id, 'First draft.');
    const first = await get(tenant, `/v1/conversations/${c.id}/summary`);
    expect(first.status).toBe(200);
    checker.check('GET', '/v1/conversations/{id}/summary', 200, first.body);
    expect(first.body).toEqual({ data: { conversation_id: c.id, text: 'First draft.', revision: 1, updated_at: expect.stringMatching(/Z$/) } });
    await ingest.writeSummary(c.id, 'Reviewed.');
    const second = await get(tenant, `/v1/conversations/${c.id}/summary`);
    checker.check('GET', '/v1/conversations/{id}/summary', 200, second.body);
    expect(second.body.data).toMatchObject({ text: 'Reviewed.', revision: 2 });
    const description = doc.paths['/v1/conversations/{id}/summary'].get.description;
    expect(description).toMatch(/conversation review is off/i);
    expect(description).toMatch(/no summary has been written yet/i);
  });

  it("another organisation's conversation, or none, answers 404 on every {id} route", async () => {
    const other = await makeTenant(api.app);
    await api.app.get(OrganisationsService).setConversationReview(t.organisationId, true);
    const theirs = await start(other);
    await ingest.writeSummary(theirs.id, 'Theirs.');
    const ids = [theirs.id, '0'.repeat(32), theirs.id.toUpperCase(), 'abc', `${theirs.id}0`];
    for (const id of ids) {
      for (const suffix of ['', '/facts', '/summary', '/transcript']) {
        const res = await get(t, `/v1/conversations/${id}${suffix}`);
        expectError(res, 404, 'not_found', `/v1/conversations/{id}${suffix}`);
        expect(res.body.error.message).not.toMatch(/review/);
      }
    }
  });

  it('conversations:read gates the reads and summaries:read the summary (403 scope_missing)', async () => {
    const c = await start(t);
    const summariesOnly = await makeTenant(api.app, ['summaries:read'] as Scope[]);
    const conversationsOnly = await makeTenant(api.app, ['conversations:read'] as Scope[]);
    for (const path of ['/v1/conversations', `/v1/conversations/${c.id}`, `/v1/conversations/${c.id}/facts`, `/v1/conversations/${c.id}/transcript`]) {
      const res = await get(summariesOnly, path);
      expect({ path, status: res.status, code: res.body.error?.code }).toEqual({ path, status: 403, code: 'scope_missing' });
    }
    const res = await get(conversationsOnly, `/v1/conversations/${c.id}/summary`);
    expect({ status: res.status, code: res.body.error?.code }).toEqual({ status: 403, code: 'scope_missing' });
  });

  it('documents no extra errors, and the whole-list answers without next_cursor', () => {
    // The front door's, and 404 where the path names a conversation (a wrong method or path is no call of these: no 405).
    const common = ['400', '401', '403', '429', '500'];
    for (const path of [
      '/v1/conversations',
      '/v1/conversations/{id}',
      '/v1/conversations/{id}/facts',
      '/v1/conversations/{id}/summary',
      '/v1/conversations/{id}/transcript',
    ]) {
      expect(Object.keys(doc.paths[path].get.responses).sort()).toEqual(['200', ...(path.includes('{') ? ['404'] : []), ...common].sort());
    }
    for (const path of ['/v1/conversations/{id}/facts', '/v1/conversations/{id}/transcript']) {
      expect(doc.paths[path].get.responses['200'].content['application/json'].schema.required).toEqual(['data']);
    }
  });

  describe('ingest (the platform side)', () => {
    it('start: refuses a closed case (case_closed), an unknown case, bad or equal languages', async () => {
      const c = await openCase(t);
      await api.app.get(CasesService).close(c.id);
      expect((await rejection(ingest.start(c.id, 'en', 'es'))).code).toBe('case_closed');
      expect((await rejection(ingest.start('999999999', 'en', 'es'))).code).toBe('not_found');
      const open = await openCase(t);
      for (const [a, b] of [
        ['english', 'es'],
        ['en', 'ES'],
        ['en', 'en'],
        ['en', ''],
      ]) {
        expect((await rejection(ingest.start(open.id, a, b))).code).toBe('validation_failed');
      }
    });

    it('appendTurn: the language must be one of the two; an ended conversation takes no turn', async () => {
      const c = await start(t);
      const err = await rejection(ingest.appendTurn(c.id, { speaker: 's', language: 'fr', text: 'Bonjour', translation: 'Hello' }));
      expect(err.code).toBe('validation_failed');
      expect(err.message).toContain('language');
      expect((await rejection(ingest.appendTurn(c.id, { speaker: ' ', language: 'en', text: 'x', translation: 'y' }))).code).toBe('validation_failed');
      await ingest.end(c.id);
      expect((await rejection(ingest.appendTurn(c.id, { speaker: 's', language: 'en', text: 'x', translation: 'y' }))).code).toBe('validation_failed');
      expect((await rejection(ingest.end('f'.repeat(32)))).code).toBe('not_found');
    });
  });

  describe('events', () => {
    it('ending a conversation with turns writes exactly one conversation.ended row; ending again adds none', async () => {
      const c = await start(t);
      await ingest.appendTurn(c.id, { speaker: 's', language: 'es', text: 'Hola', translation: 'Hello' });
      expect(await outbox(c.id)).toEqual([]);
      await ingest.end(c.id);
      await ingest.end(c.id);
      expect(await outbox(c.id)).toEqual([{ organisation_id: t.organisationId, event: 'conversation.ended', data: { conversation_id: c.id } }]);
    });

    it('ending a conversation with no turns writes no event', async () => {
      const c = await start(t);
      const ended = await ingest.end(c.id);
      expect(ended.status).toBe('ended');
      expect(await outbox(c.id)).toEqual([]);
    });

    it('writing and rewriting a summary writes summary.ready each time', async () => {
      const c = await start(t);
      expect((await ingest.writeSummary(c.id, 'One.')).revision).toBe(1);
      expect((await ingest.writeSummary(c.id, 'Two.')).revision).toBe(2);
      const ready = { organisation_id: t.organisationId, event: 'summary.ready', data: { conversation_id: c.id } };
      expect(await outbox(c.id)).toEqual([ready, ready]);
    });

    it('no outbox row when the transaction of the change rolls back', async () => {
      const c = await start(t);
      await ingest.appendTurn(c.id, { speaker: 's', language: 'en', text: 'Hi', translation: 'Hola' });
      const tx = api.app.get(TransactionHost);
      const boom = (fn: () => Promise<unknown>) =>
        tx.run(async () => {
          await fn();
          throw new Error('rolled back after the change');
        });
      await expect(boom(() => ingest.end(c.id))).rejects.toThrow('rolled back');
      await expect(boom(() => ingest.writeSummary(c.id, 'Lost.'))).rejects.toThrow('rolled back');
      expect(await outbox(c.id)).toEqual([]);
      expect((await get(t, `/v1/conversations/${c.id}`)).body.data).toMatchObject({ status: 'active', ended_at: null });
      // The change itself then commits with its event.
      await ingest.end(c.id);
      expect((await outbox(c.id)).map((r: { event: string }) => r.event)).toEqual(['conversation.ended']);
    });
  });
});
