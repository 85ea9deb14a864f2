import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Documents sent through the API for translation: the original as received and,
 * once the worker has translated it, the translation in the same format.
 */
export class Documents1763790000000 implements MigrationInterface {
  name = 'Documents1763790000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE documents (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        organisation_id bigint NOT NULL REFERENCES organisations (id) ON DELETE CASCADE,
        case_id bigint NOT NULL REFERENCES cases (id) ON DELETE CASCADE,
        -- The connection that sent it; kept for the record, not for access (documents belong to the organisation).
        connection_id bigint REFERENCES connections (id) ON DELETE SET NULL,
        -- BCP 47 tags, canonical form; no source language means the engine detects it.
        source_language text,
        target_language text NOT NULL,
        -- The file name as sent (base name only); null for text sent as JSON.
        name text CHECK (name IS NULL OR length(name) BETWEEN 1 AND 255),
        media_type text NOT NULL,
        format text NOT NULL CHECK (format IN ('text', 'markdown', 'html', 'docx')),
        state text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'translating', 'translated', 'failed')),
        failure_reason text,
        attempts int NOT NULL DEFAULT 0,
        original bytea NOT NULL,
        original_bytes int NOT NULL CHECK (original_bytes > 0),
        original_sha256 char(64) NOT NULL,
        translated bytea,
        translated_bytes int,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        updated_at timestamptz(3) NOT NULL DEFAULT now(),
        translated_at timestamptz(3),
        CONSTRAINT documents_failed_has_reason CHECK ((state = 'failed') = (failure_reason IS NOT NULL)),
        CONSTRAINT documents_translated_has_content CHECK ((state = 'translated') = (translated IS NOT NULL AND translated_at IS NOT NULL))
      );
      CREATE INDEX documents_list_idx ON documents (organisation_id, created_at DESC, id DESC);
      CREATE INDEX documents_case_idx ON documents (case_id);
      -- The worker's sweep for documents whose job never reached the queue.
      CREATE INDEX documents_queued_idx ON documents (created_at) WHERE state = 'queued';
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE documents');
  }
}
