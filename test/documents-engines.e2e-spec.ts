import { spawnSync } from 'node:child_process';
import { makeTenant, Tenant } from './support/api';
import { DocumentsHarness, openCase, settled, startDocuments, translatedEvents } from './support/documents-harness';
import { EngineStandIn } from './support/engine-stand-in';
import { ApertiumEngine, DeepLEngine, LibreTranslateEngine, NO_ENGINE_REASON, TranslationEngineError } from '@features/documents';

const SLOW = 60_000;
const RETRY = { attempts: 3, backoffMs: 50 };

/** One api + worker per engine configuration, a tenant and an open case. */
function withEngine(env: () => Record<string, string>) {
  const ctx = {} as { h: DocumentsHarness; t: Tenant; caseId: string };
  beforeAll(async () => {
    ctx.h = await startDocuments(env(), { retry: RETRY });
    ctx.t = await makeTenant(ctx.h.api.app);
    ctx.caseId = await openCase(ctx.h.db, ctx.t.organisationId);
  }, SLOW);
  afterAll(() => ctx.h?.close(), SLOW);
  const send = async (body: Record<string, unknown>) => {
    const res = await ctx.h.api
      .http()
      .post('/v1/documents')
      .set(ctx.t.auth)
      .send({ case_id: ctx.caseId, ...body });
    if (res.status !== 202) throw new Error(`POST /v1/documents answered ${res.status}: ${JSON.stringify(res.body)}`);
    return res.body.data as { id: string };
  };
  const file = async (content: Buffer, filename: string, fields: Record<string, string>) => {
    const req = ctx.h.api.http().post('/v1/documents').set(ctx.t.auth).field('case_id', ctx.caseId);
    for (const [k, v] of Object.entries(fields)) req.field(k, v);
    const res = await req.attach('file', content, { filename });
    if (res.status !== 202) throw new Error(`POST /v1/documents answered ${res.status}: ${JSON.stringify(res.body)}`);
    return res.body.data as { id: string };
  };
  const done = async (id: string) => (await settled(ctx.h.api, ctx.t, id)).body.data;
  return { ctx, send, file, done };
}

describe('Document translation engines', () => {
  let engine: EngineStandIn;
  beforeAll(async () => {
    engine = await new EngineStandIn().start();
  });
  afterAll(() => engine?.stop());
  beforeEach(() => {
    engine.failures.length = 0;
    engine.failAlways = null;
  });
  const since = () => engine.requests.length;

  describe('LibreTranslate failures, retried with backoff', () => {
    const { ctx, send, done } = withEngine(() => ({ TRANSLATION_ENGINE: 'libretranslate', TRANSLATION_ENGINE_URL: engine.url }));

    it('an engine that keeps failing (503) is tried on every attempt, then the document is failed with its reason, and no event', async () => {
      engine.failAlways = { status: 503, body: { error: 'Service temporarily overloaded' } };
      const before = since();
      const doc = await send({ text: 'Hello', source_language: 'en', target_language: 'es' });
      const result = await done(doc.id);
      expect(result).toMatchObject({ state: 'failed', failure_reason: 'LibreTranslate answered 503: Service temporarily overloaded', translation: null });
      expect(engine.requests.length - before).toBe(RETRY.attempts);
      const [{ attempts }] = await ctx.h.db.query(`SELECT attempts FROM documents WHERE id = $1`, [doc.id]);
      expect(attempts).toBe(RETRY.attempts);
      expect(await translatedEvents(ctx.h.db, doc.id)).toEqual([]);
    });

    it('an engine that fails twice (503, then 429) and then answers: translated on the third attempt, one event', async () => {
      engine.failures.push({ status: 503, body: { error: 'busy' } }, { status: 429, body: { error: 'Too many requests' } });
      const before = since();
      const doc = await send({ text: 'Third time lucky', target_language: 'fr' });
      const result = await done(doc.id);
      expect(result).toMatchObject({ state: 'translated', translation: { content: 'THIRD TIME LUCKY' } });
      expect(engine.requests.length - before).toBe(3);
      expect(await translatedEvents(ctx.h.db, doc.id)).toHaveLength(1);
    });

    it("a refusal (400, e.g. an unsupported pair) is permanent: failed after one attempt with the engine's words", async () => {
      engine.failures.push({ status: 400, body: { error: 'uk is not supported' } });
      const before = since();
      const doc = await send({ text: 'Hello', source_language: 'en', target_language: 'uk' });
      expect(await done(doc.id)).toMatchObject({ state: 'failed', failure_reason: 'LibreTranslate answered 400: uk is not supported' });
      expect(engine.requests.length - before).toBe(1);
    });
  });

  describe('DeepL', () => {
    const { ctx, send, file, done } = withEngine(() => ({
      TRANSLATION_ENGINE: 'deepl',
      TRANSLATION_ENGINE_URL: engine.url,
      TRANSLATION_ENGINE_KEY: engine.deeplKey,
    }));

    it("translates through POST /v2/translate with DeepL-Auth-Key and DeepL's codes", async () => {
      const before = since();
      const doc = await file(Buffer.from('<p title="Tip">Hello <b>world</b></p>'), 'page.html', { source_language: 'de', target_language: 'en-GB' });
      const result = await done(doc.id);
      expect(result).toMatchObject({ state: 'translated', translation: { content: '<p title="TIP">HELLO <b>WORLD</b></p>' } });
      const sent = engine.requests.slice(before);
      expect(sent).toHaveLength(1);
      expect(sent[0]).toMatchObject({ protocol: 'deepl', path: '/v2/translate' });
      expect(sent[0].headers.authorization).toBe(`DeepL-Auth-Key ${engine.deeplKey}`);
      expect(sent[0].body).toEqual({ text: ['Tip', 'Hello', 'world'], target_lang: 'EN-GB', source_lang: 'DE' });

      const auto = await send({ text: 'Bonjour', target_language: 'pt' });
      expect(await done(auto.id)).toMatchObject({ state: 'translated' });
      expect(engine.requests[engine.requests.length - 1].body).toEqual({ text: ['Bonjour'], target_lang: 'PT-PT' });
      expect(await translatedEvents(ctx.h.db, auto.id)).toEqual([
        { organisation_id: ctx.t.organisationId, data: { document_id: auto.id, case_id: ctx.caseId, language: 'pt' } },
      ]);
    });

    it("a wrong key (403) and a used-up quota (456) fail the document at once, with DeepL's message", async () => {
      const key = engine.deeplKey;
      engine.deeplKey = 'another-key';
      try {
        const before = since();
        const doc = await send({ text: 'Hello', target_language: 'de' });
        expect(await done(doc.id)).toMatchObject({ state: 'failed', failure_reason: 'DeepL answered 403: Wrong endpoint or authentication key.' });
        expect(engine.requests.length - before).toBe(1);
      } finally {
        engine.deeplKey = key;
      }
      engine.failures.push({ status: 456, body: { message: 'Quota exceeded' } });
      const quota = await send({ text: 'Hello', target_language: 'de' });
      expect(await done(quota.id)).toMatchObject({ state: 'failed', failure_reason: 'DeepL answered 456: Quota exceeded' });
    });
  });

  describe('no engine configured (TRANSLATION_ENGINE=none)', () => {
    const { ctx, send, done } = withEngine(() => ({ TRANSLATION_ENGINE: 'none' }));

    it('documents are taken, then end failed with a reason that says so; nothing is faked', async () => {
      const before = since();
      const doc = await send({ text: 'Hello', target_language: 'es' });
      const result = await done(doc.id);
      expect(result).toMatchObject({ state: 'failed', failure_reason: NO_ENGINE_REASON, translation: null });
      expect(NO_ENGINE_REASON).toMatch(/No translation engine is configured \(TRANSLATION_ENGINE=none\)/);
      expect(engine.requests.length).toBe(before);
      expect(await translatedEvents(ctx.h.db, doc.id)).toEqual([]);
    });
  });

  describe('Apertium through apertium-apy (HTTP)', () => {
    const { ctx, send, done } = withEngine(() => ({ TRANSLATION_ENGINE: 'apertium', TRANSLATION_ENGINE_URL: engine.url }));

    it('posts langpair and q per segment; the source language is required', async () => {
      const before = since();
      const doc = await send({ text: 'Hello\nworld', source_language: 'en', target_language: 'es' });
      expect(await done(doc.id)).toMatchObject({ state: 'translated', translation: { content: 'HELLO\nWORLD' } });
      expect(engine.requests.slice(before).map((r) => r.body)).toEqual([
        { langpair: 'eng|spa', q: 'Hello', markUnknown: 'no' },
        { langpair: 'eng|spa', q: 'world', markUnknown: 'no' },
      ]);
      const missing = await ctx.h.api.http().post('/v1/documents').set(ctx.t.auth).send({ case_id: ctx.caseId, text: 'Hello', target_language: 'es' });
      expect({ status: missing.status, code: missing.body.error.code }).toEqual({ status: 422, code: 'validation_failed' });
      expect(missing.body.error.message).toMatch(/^source_language: is required/);
    });
  });

  const apertiumInstalled = spawnSync('apertium', ['-l'], { encoding: 'utf8' }).stdout?.split(/\s+/).includes('eng-spa') ?? false;
  const describeApertium = apertiumInstalled ? describe : describe.skip;
  describeApertium(
    `Apertium for real, through the apertium command${apertiumInstalled ? '' : ' (SKIPPED: apertium with the eng-spa pair is not installed: apt-get install apertium apertium-eng-spa)'}`,
    () => {
      const { file, send, done } = withEngine(() => ({ TRANSLATION_ENGINE: 'apertium' }));

      it('translates English to Spanish, several segments per run, each back in its place', async () => {
        const doc = await file(Buffer.from('Hello world.\n\nThe cat is black.\n'), 'notes.txt', { source_language: 'en', target_language: 'es' });
        expect(await done(doc.id)).toMatchObject({ state: 'translated', translation: { content: 'Hola Mundo.\n\nEl gato es negro.\n' } });
        const html = await send({ text: '<p>The house is <b>red</b>.</p>', format: 'html', source_language: 'en', target_language: 'es' });
        // Inline markup splits the sentence: the engine sees "The house is" and "red" apart (markup is never sent).
        expect((await done(html.id)).translation.content).toBe('<p>La casa es <b>Rojo</b>.</p>');
      });

      it("a pair that is not installed fails the document with Apertium's list of pairs", async () => {
        const doc = await send({ text: 'Hello', source_language: 'en', target_language: 'fr' });
        expect(await done(doc.id)).toMatchObject({
          state: 'failed',
          failure_reason: expect.stringMatching(/^Apertium has no eng-fra pair installed \(installed: .*eng-spa/),
        });
      });

      it('the adapter, called directly, answers one translation per segment in order', async () => {
        const out = await new ApertiumEngine().translate(['Good morning', 'I have a dog', 'Thank you'], { source: 'en', target: 'es' });
        expect(out.map((s) => s.trim())).toEqual(['Buenos días', 'Tengo un perro', 'Gracias']);
      });
    },
  );

  describe('adapters, called directly', () => {
    it('an engine that cannot be reached is a failure worth retrying', async () => {
      const err = await new LibreTranslateEngine({ url: 'http://127.0.0.1:9', timeoutMs: 2000 })
        .translate(['x'], { source: null, target: 'es' })
        .catch((e) => e);
      expect(err).toBeInstanceOf(TranslationEngineError);
      expect(err).toMatchObject({
        permanent: false,
        message: expect.stringMatching(/^LibreTranslate could not be reached at http:\/\/127\.0\.0\.1:9: ECONNREFUSED/),
      });
    });

    it('Apertium without its command installed is a permanent failure that says how to install it', async () => {
      const err = await new ApertiumEngine({ command: 'apertium-not-installed' }).translate(['x'], { source: 'en', target: 'es' }).catch((e) => e);
      expect(err).toMatchObject({ permanent: true, message: expect.stringContaining('apt-get install apertium') });
    });

    it('DeepL without a key is refused before any call; a :fx key goes to the free API', async () => {
      const err = await new DeepLEngine({ url: engine.url }).translate(['x'], { source: null, target: 'es' }).catch((e) => e);
      expect(err).toMatchObject({ permanent: true, message: expect.stringContaining('TRANSLATION_ENGINE_KEY') });
      expect((new DeepLEngine({ authKey: 'k:fx' }) as unknown as { endpoint: string }).endpoint).toBe('https://api-free.deepl.com/v2/translate');
      expect((new DeepLEngine({ authKey: 'k' }) as unknown as { endpoint: string }).endpoint).toBe('https://api.deepl.com/v2/translate');
    });

    it('an engine answering the wrong number of translations is a failure, not a silent shift', async () => {
      engine.failures.push({ status: 200, body: { translatedText: ['only one'] } });
      const err = await new LibreTranslateEngine({ url: engine.url }).translate(['a', 'b'], { source: 'en', target: 'es' }).catch((e) => e);
      expect(err).toMatchObject({ message: 'LibreTranslate answered 1 translations for 2 texts.' });
    });
  });
});
