import { baseLanguage } from '../model/languages';
import { callEngine } from './engine-http';
import { EngineLimits, expectTranslations, LanguagePair, TranslationEngine, TranslationEngineError } from './translation-engine';

export interface LibreTranslateOptions {
  /** Base address, e.g. http://libretranslate:5000. */
  url: string;
  apiKey?: string;
  timeoutMs?: number;
  limits?: Partial<EngineLimits>;
}

/** LibreTranslate's codes: the base language, and `zt` for traditional Chinese. */
export const libreTranslateCode = (tag: string): string => (tag === 'zh-Hant' ? 'zt' : baseLanguage(tag));

/**
 * LibreTranslate (self-hosted, open source): `POST /translate {q, source, target, format}` →
 * `{translatedText}`. Segments go as an array in `q` (answered as an array); without a source
 * language the engine detects it (`source: "auto"`).
 */
export class LibreTranslateEngine extends TranslationEngine {
  readonly name = 'LibreTranslate';
  readonly limits: EngineLimits;
  private readonly endpoint: string;

  constructor(private readonly options: LibreTranslateOptions) {
    super();
    this.endpoint = `${options.url.replace(/\/+$/, '')}/translate`;
    this.limits = { maxSegmentChars: 2000, maxRequestChars: 10000, maxBatchSize: 50, ...options.limits };
  }

  async translate(texts: string[], languages: LanguagePair): Promise<string[]> {
    const body = {
      q: texts,
      source: languages.source ? libreTranslateCode(languages.source) : 'auto',
      target: libreTranslateCode(languages.target),
      format: 'text',
      ...(this.options.apiKey ? { api_key: this.options.apiKey } : {}),
    };
    const answer = await callEngine<{ translatedText?: unknown }>({
      engine: this.name,
      method: 'POST',
      url: this.endpoint,
      body: JSON.stringify(body),
      timeoutMs: this.options.timeoutMs ?? 60_000,
    });
    if (answer.translatedText === undefined) throw new TranslationEngineError(`${this.name} answered without translatedText.`, false);
    return expectTranslations(this.name, texts.length, answer.translatedText);
  }
}
