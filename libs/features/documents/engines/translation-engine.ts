/** Languages of one translation request: canonical BCP 47 tags; no source means "detect it". */
export interface LanguagePair {
  source: string | null;
  target: string;
}

/** How much one request to the engine may carry. */
export interface EngineLimits {
  /** Characters in one text (longer units are split into segments at sentence or word boundaries). */
  maxSegmentChars: number;
  /** Characters in all texts of one request. */
  maxRequestChars: number;
  /** Texts in one request. */
  maxBatchSize: number;
}

/**
 * An engine refused or failed. `permanent` says whether trying again can help: a bad key, an
 * unsupported pair or an exhausted quota are permanent; a timeout, a 5xx, a 429 or a dropped
 * connection are not (the worker retries those with backoff).
 */
export class TranslationEngineError extends Error {
  constructor(
    message: string,
    readonly permanent: boolean,
  ) {
    super(message);
    this.name = 'TranslationEngineError';
  }
}

/**
 * The port the translation service talks to. Adapters speak one engine's protocol; they get
 * plain-text segments only (the formats keep markup away from engines) and answer one
 * translation per segment, in order.
 */
export abstract class TranslationEngine {
  /** Name shown in failure reasons and logs. */
  abstract readonly name: string;
  abstract readonly limits: EngineLimits;
  /** Engines that cannot detect the source language (Apertium works per language pair). */
  readonly needsSourceLanguage: boolean = false;

  abstract translate(texts: string[], languages: LanguagePair): Promise<string[]>;
}

/** Checks an engine answered one string per text sent. */
export function expectTranslations(engine: string, sent: number, got: unknown): string[] {
  if (!Array.isArray(got) || got.length !== sent || got.some((t) => typeof t !== 'string')) {
    throw new TranslationEngineError(`${engine} answered ${Array.isArray(got) ? got.length : 'no'} translations for ${sent} texts.`, false);
  }
  return got as string[];
}
