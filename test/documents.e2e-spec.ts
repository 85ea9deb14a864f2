import { SCOPES } from '@kernel/core';
import { QUEUES, TRANSLATION_JOBS } from '@kernel/queue';
import { getQueueToken } from '@nestjs/bullmq';
import type { Queue } from 'bullmq';
import JSZip from 'jszip';
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { request as httpsRequest } from 'node:https';
import { Readable } from 'node:stream';
import { makeTenant, Tenant } from './support/api';
import { buildDocx, DOCX_TEXT_PARTS, runTexts, withoutText } from './support/docx-fixture';
import { DocumentsHarness, openCase, settled, startDocuments, translatedEvents } from './support/documents-harness';
import { EngineStandIn } from './support/engine-stand-in';
import { OpenApiChecker } from './support/openapi-check';
import { TranslationProcessor } from '@features/documents/worker';
import { ABANDONED_REASON, DocumentTranslatorService } from '@features/documents';

type Res = { status: number; body: any; headers: Record<string, string> };
const MAX_FILE = 200_000;
const MAX_TEXT = 5_000;
const SLOW = 60_000;
const SOFFICE = spawnSync('soffice', ['--version'], { encoding: 'utf8' }).status === 0;

describe('Documents: send, translate in the worker, read back', () => {
  let h: DocumentsHarness;
  let engine: EngineStandIn;
  let checker: OpenApiChecker;
  let t: Tenant;
  let caseId: string;

  beforeAll(async () => {
    engine = await new EngineStandIn().start();
    h = await startDocuments(
      {
        TRANSLATION_ENGINE: 'libretranslate',
        TRANSLATION_ENGINE_URL: engine.url,
        DOCUMENT_MAX_FILE_BYTES: String(MAX_FILE),
        DOCUMENT_MAX_TEXT_CHARS: String(MAX_TEXT),
      },
      { retry: { attempts: 3, backoffMs: 50 } },
    );
    checker = new OpenApiChecker((await h.api.http().get('/v1/openapi.json')).body);
    t = await makeTenant(h.api.app);
    caseId = await openCase(h.db, t.organisationId);
  }, SLOW);
  afterAll(async () => {
    await h?.close();
    await engine?.stop();
  }, SLOW);

  const postText = (body: unknown, tenant = t, key?: string): Promise<Res> => {
    const req = h.api.http().post('/v1/documents').set(tenant.auth);
    if (key) req.set('Idempotency-Key', key);
    return req.send(body as object) as unknown as Promise<Res>;
  };
  const postFile = (
    file: Buffer | null,
    fields: Record<string, string>,
    opts: { filename?: string; contentType?: string; key?: string; tenant?: Tenant; extraFiles?: number } = {},
  ): Promise<Res> => {
    const req = h.api
      .http()
      .post('/v1/documents')
      .set((opts.tenant ?? t).auth);
    if (opts.key) req.set('Idempotency-Key', opts.key);
    for (const [k, v] of Object.entries(fields)) req.field(k, v);
    if (file) req.attach('file', file, { filename: opts.filename ?? 'doc.txt', contentType: opts.contentType ?? 'application/octet-stream' });
    for (let i = 0; i < (opts.extraFiles ?? 0); i++) req.attach('file', Buffer.from('more'), { filename: `more${i}.txt` });
    return req as unknown as Promise<Res>;
  };
  const expectError = (res: Res, status: number, code: string, message?: RegExp) => {
    expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
    if (message) expect(res.body.error.message).toMatch(message);
    checker.check('POST', '/v1/documents', status, res.body);
  };
  const since = () => engine.requests.length;
  /**
   * The engine's requests since `before` that carry one of these segments. This spec's worker takes
   * every queued document in the shared test database (the intake is not per organisation), so a
   * document another spec left queued (one that runs no worker) may reach this engine stand-in too.
   */
  const sentFor = (before: number, ...segments: string[]) =>
    engine.requests
      .slice(before)
      .filter((r) => ([] as unknown[]).concat(r.body?.q ?? []).some((q) => typeof q === 'string' && segments.some((s) => q.includes(s))));

  describe('JSON text', () => {
    it('answers 202 queued at once; the worker translates through LibreTranslate; GET carries the translation; document.translated is in the outbox', async () => {
      const before = since();
      const res = await postText({ case_id: caseId, text: 'Hello, how are you?\nSee you soon.', source_language: 'EN', target_language: 'es' });
      expect(res.status).toBe(202);
      checker.check('POST', '/v1/documents', 202, res.body);
      const created = res.body.data;
      expect(created).toEqual({
        id: expect.stringMatching(/^\d+$/),
        case_id: caseId,
        name: null,
        media_type: 'text/plain',
        format: 'text',
        size_bytes: 33,
        source_language: 'en',
        target_language: 'es',
        state: 'queued',
        failure_reason: null,
        translation: null,
        created_at: expect.stringMatching(/Z$/),
        updated_at: expect.stringMatching(/Z$/),
        translated_at: null,
      });

      const done = await settled(h.api, t, created.id);
      checker.check('GET', '/v1/documents/{id}', 200, done.body);
      expect(done.body.data).toMatchObject({
        id: created.id,
        state: 'translated',
        failure_reason: null,
        translation: { language: 'es', media_type: 'text/plain', encoding: 'utf-8', content: 'HELLO, HOW ARE YOU?\nSEE YOU SOON.', size_bytes: 33 },
        translated_at: expect.stringMatching(/Z$/),
      });
      // What the engine received: LibreTranslate's shape, the lines as segments, canonical codes.
      const sent = sentFor(before, 'Hello, how are you?', 'See you soon.');
      expect(sent).toHaveLength(1);
      expect(sent[0]).toMatchObject({ protocol: 'libretranslate', path: '/translate' });
      expect(sent[0].body).toEqual({ q: ['Hello, how are you?', 'See you soon.'], source: 'en', target: 'es', format: 'text' });

      const events = await translatedEvents(h.db, created.id);
      expect(events).toEqual([{ organisation_id: t.organisationId, data: { document_id: created.id, case_id: caseId, language: 'es' } }]);
    });

    it('without a source language the engine detects it (source "auto"); regional targets are kept', async () => {
      const before = since();
      const res = await postText({ case_id: caseId, text: 'Good morning', target_language: 'pt-br' });
      expect(res.status).toBe(202);
      expect(res.body.data).toMatchObject({ source_language: null, target_language: 'pt-BR' });
      const done = await settled(h.api, t, res.body.data.id);
      expect(done.body.data.translation.content).toBe('GOOD MORNING');
      expect(sentFor(before, 'Good morning').map((r) => r.body)).toEqual([{ q: ['Good morning'], source: 'auto', target: 'pt', format: 'text' }]);
    });

    it('takes Markdown and HTML as text too, in the same format back', async () => {
      const md = await postText({ case_id: caseId, text: '# Title\n\n- item `code`\n', format: 'markdown', target_language: 'de' });
      expect(md.status).toBe(202);
      expect(md.body.data).toMatchObject({ format: 'markdown', media_type: 'text/markdown' });
      expect((await settled(h.api, t, md.body.data.id)).body.data.translation.content).toBe('# TITLE\n\n- ITEM `code`\n');

      const html = await postText({ case_id: caseId, text: '<p class="a">Hi <b>there</b></p>', format: 'html', target_language: 'de' });
      expect((await settled(h.api, t, html.body.data.id)).body.data.translation).toMatchObject({
        media_type: 'text/html',
        content: '<p class="a">HI <b>THERE</b></p>',
      });
    });

    it('splits a long text into segments within the engine limit and joins them back in order', async () => {
      const sentence = (i: number) => `Sentence number ${i} is here.`;
      const text = Array.from({ length: 150 }, (_, i) => sentence(i)).join(' ');
      const before = since();
      const res = await postText({ case_id: caseId, text, source_language: 'en', target_language: 'fr' });
      expect(res.status).toBe(202);
      const done = await settled(h.api, t, res.body.data.id);
      expect(done.body.data.translation.content).toBe(text.toUpperCase());
      const segments = sentFor(before, 'Sentence number').flatMap((r) => r.body.q as string[]);
      expect(segments.length).toBeGreaterThan(1);
      for (const s of segments) expect(s.length).toBeLessThanOrEqual(2000);
      expect(segments.join(' ')).toBe(text);
    });
  });

  describe('files', () => {
    it('a .txt file keeps its line breaks', async () => {
      const res = await postFile(
        Buffer.from('First line\r\n\r\nSecond line\r\n'),
        { case_id: caseId, target_language: 'es', source_language: 'en' },
        { filename: 'notes.txt', contentType: 'text/plain' },
      );
      expect(res.status).toBe(202);
      checker.check('POST', '/v1/documents', 202, res.body);
      expect(res.body.data).toMatchObject({ name: 'notes.txt', format: 'text', media_type: 'text/plain', size_bytes: 27 });
      const done = await settled(h.api, t, res.body.data.id);
      expect(done.body.data.translation.content).toBe('FIRST LINE\r\n\r\nSECOND LINE\r\n');
    });

    it('a Markdown file keeps its structure', async () => {
      const md = '# Guide\n\nRun `npm test` and read [the docs](https://example.com/docs).\n\n```sh\necho "keep"\n```\n\n| A | B |\n|---|---|\n| one | two |\n';
      const res = await postFile(Buffer.from(md), { case_id: caseId, target_language: 'es', source_language: 'en' }, { filename: 'guide.md' });
      expect(res.body.data).toMatchObject({ format: 'markdown', media_type: 'text/markdown' });
      const done = await settled(h.api, t, res.body.data.id);
      expect(done.body.data.translation.content).toBe(
        '# GUIDE\n\nRUN `npm test` AND READ [THE DOCS](https://example.com/docs).\n\n```sh\necho "keep"\n```\n\n| A | B |\n|---|---|\n| ONE | TWO |\n',
      );
    });

    it('an HTML file: only text and translatable attributes change; markup, scripts and styles are intact', async () => {
      const html =
        '<!DOCTYPE html>\n<html><head><title>Welcome page</title><style>.x{content:"a"}</style>' +
        '<script>const msg = "<b>hi</b>"; if (a < b) {}</script></head>\n' +
        '<body><h1 class="hero" data-id=7>Welcome &amp; hello</h1><!-- note -->' +
        '<img src="/logo.png" alt="Our logo"><a href="/x" title="More info" aria-label="Read more">read more</a>' +
        '<code>keep()</code><input placeholder="Your name"></body></html>\n';
      const res = await postFile(
        Buffer.from(html),
        { case_id: caseId, target_language: 'es', source_language: 'en' },
        { filename: 'page.html', contentType: 'text/html' },
      );
      expect(res.body.data).toMatchObject({ format: 'html', media_type: 'text/html' });
      const done = await settled(h.api, t, res.body.data.id);
      expect(done.body.data.translation.content).toBe(
        '<!DOCTYPE html>\n<html><head><title>WELCOME PAGE</title><style>.x{content:"a"}</style>' +
          '<script>const msg = "<b>hi</b>"; if (a < b) {}</script></head>\n' +
          '<body><h1 class="hero" data-id=7>WELCOME &amp; HELLO</h1><!-- note -->' +
          '<img src="/logo.png" alt="OUR LOGO"><a href="/x" title="MORE INFO" aria-label="READ MORE">READ MORE</a>' +
          '<code>keep()</code><input placeholder="YOUR NAME"></body></html>\n',
      );
    });

    it("a .docx comes back as a valid package: every part but the runs' text identical", async () => {
      const original = await buildDocx();
      const res = await postFile(
        original,
        { case_id: caseId, target_language: 'es', source_language: 'en' },
        { filename: 'C:\\Users\\me\\report.docx', contentType: 'application/octet-stream' },
      );
      expect(res.status).toBe(202);
      expect(res.body.data).toMatchObject({
        name: 'report.docx',
        format: 'docx',
        media_type: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
        size_bytes: original.length,
      });
      const done = await settled(h.api, t, res.body.data.id);
      checker.check('GET', '/v1/documents/{id}', 200, done.body);
      const tr = done.body.data.translation;
      expect(tr).toMatchObject({ encoding: 'base64', media_type: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document' });
      const out = Buffer.from(tr.content, 'base64');
      expect(out.subarray(0, 4).toString('latin1')).toBe('PK\x03\x04');
      const [a, b] = await Promise.all([JSZip.loadAsync(original), JSZip.loadAsync(out)]);
      expect(Object.keys(b.files).sort()).toEqual(Object.keys(a.files).sort());
      for (const name of Object.keys(a.files).filter((n) => !a.files[n].dir)) {
        const before = await a.file(name)!.async('nodebuffer');
        const after = await b.file(name)!.async('nodebuffer');
        if (DOCX_TEXT_PARTS.includes(name)) expect(withoutText(after.toString('utf8'))).toBe(withoutText(before.toString('utf8')));
        else expect({ name, same: after.equals(before) }).toEqual({ name, same: true });
      }
      const text = runTexts(await b.file('word/document.xml')!.async('string')).join('');
      expect(text).toBe(
        runTexts(await a.file('word/document.xml')!.async('string'))
          .join('')
          .toUpperCase(),
      );
      expect(runTexts(await b.file('word/header1.xml')!.async('string'))).toEqual(['CONFIDENTIAL HEADER']);
      expect(runTexts(await b.file('word/footnotes.xml')!.async('string'))).toEqual([' A FOOTNOTE.']);
    });

    (SOFFICE ? it : it.skip)(
      `LibreOffice opens the translated .docx and reads the translated text${SOFFICE ? '' : ' (SKIPPED: soffice is not installed: apt-get install libreoffice-writer-nogui)'}`,
      async () => {
        const original = await buildDocx();
        const res = await postFile(original, { case_id: caseId, target_language: 'es', source_language: 'en' }, { filename: 'report.docx' });
        const done = await settled(h.api, t, res.body.data.id);
        const dir = mkdtempSync(join(tmpdir(), 'docx-lo-'));
        writeFileSync(join(dir, 'original.docx'), original);
        writeFileSync(join(dir, 'translated.docx'), Buffer.from(done.body.data.translation.content, 'base64'));
        const lo = spawnSync(
          'soffice',
          [
            `-env:UserInstallation=file://${dir}/profile`,
            '--headless',
            '--convert-to',
            'txt:Text',
            '--outdir',
            dir,
            join(dir, 'original.docx'),
            join(dir, 'translated.docx'),
          ],
          { encoding: 'utf8', timeout: 60_000 },
        );
        expect(lo.status).toBe(0);
        const before = readFileSync(join(dir, 'original.txt'), 'utf8');
        const after = readFileSync(join(dir, 'translated.txt'), 'utf8');
        expect(after).toContain('THE CAT IS BLACK. BOLD WORDS\tAFTER A TAB');
        // Tracked deletions are not translated; everything else reads as the original, translated.
        expect(after).toBe(before.toUpperCase().replace('DELETED TEXT', 'Deleted text'));
      },
      SLOW,
    );

    it('a file of exactly the limit is taken', async () => {
      const res = await postFile(Buffer.alloc(MAX_FILE, 'a'), { case_id: caseId, target_language: 'es' }, { filename: 'big.txt' });
      expect(res.status).toBe(202);
      expect(res.body.data.size_bytes).toBe(MAX_FILE);
    });
  });

  describe('refusals', () => {
    it('413 file_too_large: a file over the limit, also when sent chunked with no Content-Length (refused while streaming)', async () => {
      expectError(
        await postFile(Buffer.alloc(MAX_FILE + 1, 'a'), { case_id: caseId, target_language: 'es' }, { filename: 'big.txt' }),
        413,
        'file_too_large',
        /200000 bytes/,
      );

      // Chunked: only the streaming check can see it. 4 × the limit, in 16 KiB chunks.
      const boundary = 'xBOUNDARYx';
      const head = Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="case_id"\r\n\r\n${caseId}\r\n` +
          `--${boundary}\r\nContent-Disposition: form-data; name="target_language"\r\n\r\nes\r\n` +
          `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.txt"\r\nContent-Type: text/plain\r\n\r\n`,
      );
      const chunk = Buffer.alloc(16 * 1024, 'b');
      let sent = 0;
      const body = Readable.from(
        (function* () {
          yield head;
          while (sent < MAX_FILE * 4) {
            sent += chunk.length;
            yield chunk;
          }
          yield Buffer.from(`\r\n--${boundary}--\r\n`);
        })(),
      );
      const res = await new Promise<Res>((resolve, reject) => {
        const req = httpsRequest(`${h.api.url}/v1/documents`, {
          method: 'POST',
          rejectUnauthorized: false,
          headers: { ...t.auth, 'content-type': `multipart/form-data; boundary=${boundary}`, 'transfer-encoding': 'chunked' },
        });
        req.on('response', (r) => {
          let text = '';
          r.on('data', (d) => (text += d));
          r.on('end', () => resolve({ status: r.statusCode!, body: JSON.parse(text), headers: r.headers as Record<string, string> }));
        });
        req.on('error', reject);
        body.pipe(req);
      });
      expectError(res, 413, 'file_too_large');
    });

    it('413 text_too_long: a text over the character limit (counted in characters, not bytes)', async () => {
      expectError(await postText({ case_id: caseId, text: 'a'.repeat(MAX_TEXT + 1), target_language: 'es' }), 413, 'text_too_long', /5000 characters/);
      // 5000 emoji: 5000 characters, 20,000 bytes: within the limit.
      const ok = await postText({ case_id: caseId, text: '😀'.repeat(MAX_TEXT), target_language: 'es' });
      expect(ok.status).toBe(202);
    });

    it('413 text_too_long (not 400) for a JSON body too large for the parser on this call', async () => {
      expectError(await postText({ case_id: caseId, text: 'a'.repeat(1_500_000), target_language: 'es' }), 413, 'text_too_long');
      expectError(await postText({ case_id: caseId, text: 'a'.repeat(3 * 1024 * 1024), target_language: 'es' }), 413, 'text_too_long');
    });

    it('415 file_type_not_supported, decided by content and name, never by the declared type alone', async () => {
      const fields = { case_id: caseId, target_language: 'es' };
      const pdf = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.from([0xe2, 0xe3, 0xcf, 0xd3, 0x00, 0x01])]);
      expectError(await postFile(pdf, fields, { filename: 'scan.pdf', contentType: 'application/pdf' }), 415, 'file_type_not_supported');
      expectError(await postFile(pdf, fields, { filename: 'scan.txt', contentType: 'text/plain' }), 415, 'file_type_not_supported');
      expectError(
        await postFile(Buffer.from('a,b\n1,2\n'), fields, { filename: 'data.csv', contentType: 'text/plain' }),
        415,
        'file_type_not_supported',
        /\.csv/,
      );
      expectError(
        await postFile(Buffer.from('caf\xe9', 'latin1'), fields, { filename: 'latin1.txt', contentType: 'text/plain' }),
        415,
        'file_type_not_supported',
      );
      const zip = new JSZip();
      zip.file('xl/workbook.xml', '<workbook/>');
      const xlsx = await zip.generateAsync({ type: 'nodebuffer' });
      expectError(
        await postFile(xlsx, fields, { filename: 'sheet.docx', contentType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document' }),
        415,
        'file_type_not_supported',
      );
      expectError(await postFile(Buffer.from('just words'), fields, { filename: 'fake.docx' }), 415, 'file_type_not_supported');
    });

    it('422 validation_failed naming the field: case, languages, text, the file count, unknown fields', async () => {
      const other = await makeTenant(h.api.app);
      const otherCase = await openCase(h.db, other.organisationId);
      const closed = await openCase(h.db, t.organisationId);
      await h.db.query(`UPDATE cases SET status = 'closed', closed_at = now() WHERE id = $1`, [closed]);
      const base = { case_id: caseId, text: 'Hello', target_language: 'es' };
      const cases: Array<[unknown, RegExp]> = [
        [{ ...base, case_id: '999999999' }, /^case_id: no such case/],
        [{ ...base, case_id: otherCase }, /^case_id: no such case/],
        [{ ...base, case_id: closed }, /^case_id: the case is closed/],
        [{ ...base, case_id: 'abc' }, /^case_id: /],
        [{ ...base, case_id: 12 }, /^case_id: /],
        [{ case_id: caseId, text: 'Hello' }, /target_language: /],
        [{ ...base, target_language: 'xx' }, /^target_language: "xx" is not a supported language/],
        [{ ...base, target_language: 'en_GB' }, /^target_language: "en_GB" is not a well-formed BCP 47/],
        [{ ...base, source_language: 'klingon' }, /^source_language: /],
        [{ ...base, source_language: 'es' }, /^target_language: must differ from source_language/],
        [{ ...base, text: '' }, /^text: /],
        [{ ...base, text: '  \n ' }, /^text: must not be empty/],
        [{ case_id: caseId, target_language: 'es' }, /^text: /],
        [{ ...base, format: 'docx' }, /^format: must be one of/],
        [{ ...base, extra: 1 }, /^extra: is not a known field/],
      ];
      for (const [body, message] of cases) expectError(await postText(body), 422, 'validation_failed', message);

      const fields = { case_id: caseId, target_language: 'es' };
      expectError(await postFile(null, fields), 422, 'validation_failed', /^file: exactly one file/);
      expectError(await postFile(Buffer.from('one'), fields, { extraFiles: 1 }), 422, 'validation_failed', /^file: exactly one file/);
      expectError(await postFile(Buffer.from('one'), { ...fields, text: 'x' }), 422, 'validation_failed', /^text: is not a known field/);
      expectError(await postFile(Buffer.from('one'), { case_id: caseId }), 422, 'validation_failed', /target_language/);
      expectError(await postFile(Buffer.from(''), fields), 422, 'validation_failed', /^file: is empty/);
      expectError(await postFile(Buffer.from('one'), { ...fields, case_id: otherCase }), 422, 'validation_failed', /^case_id: no such case/);
      const n = await h.db.query(`SELECT count(*)::int AS n FROM documents WHERE organisation_id = $1`, [other.organisationId]);
      expect(n[0].n).toBe(0);
    });

    it('a body sent as neither JSON nor multipart answers 400; a missing scope answers 403 before any upload is read', async () => {
      const plain = await h.api.http().post('/v1/documents').set(t.auth).set('Content-Type', 'text/plain').send('hello');
      expect({ status: plain.status, code: plain.body.error.code }).toEqual({ status: 400, code: 'invalid_request' });
      const reader = await makeTenant(h.api.app, ['documents:read']);
      const res = await postFile(Buffer.alloc(MAX_FILE * 2, 'a'), { case_id: caseId, target_language: 'es' }, { tenant: reader });
      expect({ status: res.status, code: res.body.error.code }).toEqual({ status: 403, code: 'scope_missing' });
      const noRead = await makeTenant(
        h.api.app,
        SCOPES.filter((s) => s !== 'documents:read'),
      );
      const get = await h.api.http().get('/v1/documents/1').set(noRead.auth);
      expect(get.body.error.code).toBe('scope_missing');
    });
  });

  describe('Idempotency-Key', () => {
    it('the same key and the same file answer the first answer again; another file with that key is refused', async () => {
      const key = `doc-${Math.random()}`;
      const file = Buffer.from('Idempotent words');
      const fields = { case_id: caseId, target_language: 'es' };
      const first = await postFile(file, fields, { key, filename: 'a.txt' });
      expect(first.status).toBe(202);
      const again = await postFile(file, fields, { key, filename: 'a.txt' });
      expect(again.status).toBe(202);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body).toEqual(first.body);
      const otherFile = await postFile(Buffer.from('Other words!!!!!'), fields, { key, filename: 'a.txt' });
      expectError(otherFile, 422, 'idempotency_key_reused');
      const [{ n }] = await h.db.query(`SELECT count(*)::int AS n FROM documents WHERE organisation_id = $1 AND name = 'a.txt'`, [t.organisationId]);
      expect(n).toBe(1);

      const textKey = `text-${Math.random()}`;
      const a = await postText({ case_id: caseId, text: 'Once', target_language: 'es' }, t, textKey);
      const b = await postText({ target_language: 'es', text: 'Once', case_id: caseId }, t, textKey);
      expect(b.body).toEqual(a.body);
      expectError(await postText({ case_id: caseId, text: 'Twice', target_language: 'es' }, t, textKey), 422, 'idempotency_key_reused');
    });
  });

  describe('worker', () => {
    it('runs TRANSLATION_CONCURRENCY jobs at once and schedules the sweep for lost jobs', async () => {
      expect(h.worker.get(TranslationProcessor).worker.concurrency).toBe(h.api.config.translationConcurrency);
      const queue = h.worker.get<Queue>(getQueueToken(QUEUES.translations), { strict: false });
      const schedulers = await queue.getJobSchedulers();
      expect(schedulers.find((j) => j.key === TRANSLATION_JOBS.requeueStale)).toMatchObject({ name: TRANSLATION_JOBS.requeueStale, every: 60_000 });
    });

    it('a document whose job never reached the queue is queued again by the sweep, and translated', async () => {
      const [row] = await h.db.query(
        `INSERT INTO documents (organisation_id, case_id, target_language, media_type, format, original, original_bytes, original_sha256, created_at, updated_at)
         VALUES ($1, $2, 'es', 'text/plain', 'text', $3, 9, repeat('0', 64), now() - interval '10 minutes', now() - interval '10 minutes') RETURNING id`,
        [t.organisationId, caseId, Buffer.from('Lost job!')],
      );
      const id = String(row.id);
      expect((await h.worker.get(DocumentTranslatorService).sweepStale()).requeued).toBeGreaterThanOrEqual(1);
      const done = await settled(h.api, t, id);
      expect(done.body.data).toMatchObject({ state: 'translated', translation: { content: 'LOST JOB!' } });
      expect(await translatedEvents(h.db, id)).toHaveLength(1);
    });

    it('a document left translating for an hour (its job died) is failed by the sweep with a reason to send it again', async () => {
      const [row] = await h.db.query(
        `INSERT INTO documents (organisation_id, case_id, target_language, media_type, format, original, original_bytes, original_sha256, state, updated_at)
         VALUES ($1, $2, 'es', 'text/plain', 'text', $3, 5, repeat('0', 64), 'translating', now() - interval '61 minutes') RETURNING id`,
        [t.organisationId, caseId, Buffer.from('Stuck')],
      );
      expect((await h.worker.get(DocumentTranslatorService).sweepStale()).abandoned).toBeGreaterThanOrEqual(1);
      const res = await h.api.http().get(`/v1/documents/${row.id}`).set(t.auth);
      expect(res.body.data).toMatchObject({ state: 'failed', failure_reason: ABANDONED_REASON, translation: null });
    });
  });

  describe('reading', () => {
    it("another organisation's document answers 404, as does an id that is not digits", async () => {
      const res = await postText({ case_id: caseId, text: 'Private words', target_language: 'es' });
      const other = await makeTenant(h.api.app);
      const theirs = await h.api.http().get(`/v1/documents/${res.body.data.id}`).set(other.auth);
      expect({ status: theirs.status, code: theirs.body.error.code }).toEqual({ status: 404, code: 'not_found' });
      checker.check('GET', '/v1/documents/{id}', 404, theirs.body);
      const bad = await h.api.http().get('/v1/documents/abc').set(t.auth);
      expect(bad.status).toBe(404);
      const missing = await h.api.http().get('/v1/documents/987654321').set(t.auth);
      expect(missing.status).toBe(404);
    });

    it('the OpenAPI document describes both request shapes and the Document fully', async () => {
      const doc = (await h.api.http().get('/v1/openapi.json')).body;
      const op = doc.paths['/v1/documents'].post;
      expect(Object.keys(op.requestBody.content).sort()).toEqual(['application/json', 'multipart/form-data']);
      expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['202', '409', '413', '415', '422']));
      const schema = doc.components.schemas.DocumentDto;
      expect(Object.keys(schema.properties).sort()).toEqual(
        [
          'case_id',
          'created_at',
          'failure_reason',
          'format',
          'id',
          'media_type',
          'name',
          'size_bytes',
          'source_language',
          'state',
          'target_language',
          'translated_at',
          'translation',
          'updated_at',
        ].sort(),
      );
      expect(doc.components.schemas.DocumentCreateFormDto.properties.file).toMatchObject({ type: 'string', format: 'binary' });
      expect(JSON.stringify(doc)).not.toContain('"nullable"');
      const file = join(mkdtempSync(join(tmpdir(), 'oas-docs-')), 'openapi.json');
      writeFileSync(file, JSON.stringify(doc));
      const cli = require.resolve('@seriousme/openapi-schema-validator/bin/validate-api-cli.js');
      const { stdout } = await promisify(execFile)(process.execPath, [cli, file]);
      expect(JSON.parse(stdout)).toMatchObject({ valid: true });
    });
  });
});
