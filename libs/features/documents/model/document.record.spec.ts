import { DOCUMENT_COLUMNS, DocumentRow, toDocumentRecord } from './document.record';

const row = (more: Partial<DocumentRow> = {}): DocumentRow => ({
  id: '41',
  organisation_id: '2',
  case_id: '17',
  name: 'letter.docx',
  media_type: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  format: 'docx',
  original_bytes: 12345,
  source_language: 'nl',
  target_language: 'en',
  state: 'translated',
  failure_reason: null,
  created_at: new Date('2026-03-01T10:00:00.000Z'),
  updated_at: new Date('2026-03-01T10:05:00.000Z'),
  translated_at: new Date('2026-03-01T10:04:59.000Z'),
  translated: Buffer.from('translated bytes'),
  ...more,
});

describe('toDocumentRecord', () => {
  it('renames every column to its record field', () => {
    const r = row();
    expect(toDocumentRecord(r)).toEqual({
      id: '41',
      organisationId: '2',
      caseId: '17',
      name: 'letter.docx',
      mediaType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
      format: 'docx',
      sizeBytes: 12345,
      sourceLanguage: 'nl',
      targetLanguage: 'en',
      state: 'translated',
      failureReason: null,
      createdAt: r.created_at,
      updatedAt: r.updated_at,
      translatedAt: r.translated_at,
      translation: r.translated,
    });
  });

  it('answers the ids as strings even when the driver hands out numbers', () => {
    const rec = toDocumentRecord(row({ id: 41 as unknown as string, organisation_id: 2 as unknown as string, case_id: 17 as unknown as string }));
    expect(rec.id).toBe('41');
    expect(rec.organisationId).toBe('2');
    expect(rec.caseId).toBe('17');
  });

  it('keeps the nulls of a document not yet translated or sent as text', () => {
    const rec = toDocumentRecord(
      row({ name: null, source_language: null, state: 'failed', failure_reason: 'The translator refused it.', translated_at: null, translated: null }),
    );
    expect(rec).toMatchObject({
      name: null,
      sourceLanguage: null,
      state: 'failed',
      failureReason: 'The translator refused it.',
      translatedAt: null,
      translation: null,
    });
  });
});

describe('DOCUMENT_COLUMNS', () => {
  it('selects every column toDocumentRecord reads, from the alias d', () => {
    const selected = DOCUMENT_COLUMNS.split(',').map((c) => c.trim());
    expect(selected.every((c) => c.startsWith('d.'))).toBe(true);
    expect(selected.map((c) => c.slice(2)).sort()).toEqual(Object.keys(row()).sort());
  });
});
