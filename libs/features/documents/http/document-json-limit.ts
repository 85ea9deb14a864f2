import { AppConfig } from '@kernel/config';
import type { ErrorCode } from '@kernel/core';

/** The shared JSON parser's limit, below which this path never goes. */
const SHARED_LIMIT_BYTES = 1024 * 1024;
/** Worst case per character in JSON: an astral character escaped as two `\uXXXX` (what Python's json.dumps sends by default). */
const BYTES_PER_CHAR = 12;
const OTHER_FIELDS_BYTES = 64 * 1024;

/**
 * POST /v1/documents's JSON body limit and its answer, for the shared body parser: room for a
 * text of DOCUMENT_MAX_TEXT_CHARS characters however it is encoded (never below the shared
 * 1 MB), and a body beyond it answers 413 text_too_long, as the contract says, not 400.
 */
export function documentJsonLimit(config: AppConfig): { limit: number; tooLarge: { code: ErrorCode; message: string } } {
  const limit = Math.max(SHARED_LIMIT_BYTES, config.documentMaxTextChars * BYTES_PER_CHAR + OTHER_FIELDS_BYTES);
  return {
    limit,
    tooLarge: {
      code: 'text_too_long',
      message: `The JSON body is larger than ${limit} bytes; the text may have at most ${config.documentMaxTextChars} characters.`,
    },
  };
}
