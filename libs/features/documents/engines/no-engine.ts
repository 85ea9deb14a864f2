import { EngineLimits, TranslationEngine, TranslationEngineError } from './translation-engine';

export const NO_ENGINE_REASON =
  'No translation engine is configured (TRANSLATION_ENGINE=none), so this document was not translated. ' +
  'Set TRANSLATION_ENGINE to libretranslate, deepl or apertium and send the document again.';

/** TRANSLATION_ENGINE=none: every document ends failed with a reason that says so; nothing is faked. */
export class NoTranslationEngine extends TranslationEngine {
  readonly name = 'none';
  readonly limits: EngineLimits = { maxSegmentChars: 5000, maxRequestChars: 5000, maxBatchSize: 1 };

  async translate(): Promise<string[]> {
    throw new TranslationEngineError(NO_ENGINE_REASON, true);
  }
}
