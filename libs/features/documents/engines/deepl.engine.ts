import { baseLanguage } from '../model/languages';
import { callEngine } from './engine-http';
import { EngineLimits, expectTranslations, LanguagePair, TranslationEngine, TranslationEngineError } from './translation-engine';

export const DEEPL_FREE_URL = 'https://api-free.deepl.com';
export const DEEPL_PRO_URL = 'https://api.deepl.com';

export interface DeepLOptions {
  authKey?: string;
  /** Defaults to the free API for keys ending ":fx", else the pro API. */
  url?: string;
  timeoutMs?: number;
  limits?: Partial<EngineLimits>;
}

const TARGET_CODES: Readonly<Record<string, string>> = {
  en: 'EN-US',
  'en-GB': 'EN-GB',
  'en-US': 'EN-US',
  pt: 'PT-PT',
  'pt-PT': 'PT-PT',
  'pt-BR': 'PT-BR',
  zh: 'ZH-HANS',
  'zh-Hans': 'ZH-HANS',
  'zh-Hant': 'ZH-HANT',
};

/** DeepL's target codes: variants where DeepL wants one (EN, PT and ZH), else the base language. */
export const deeplTargetCode = (tag: string): string => TARGET_CODES[tag] ?? baseLanguage(tag).toUpperCase();
/** Source codes are base languages only. */
export const deeplSourceCode = (tag: string): string => baseLanguage(tag).toUpperCase();

/**
 * DeepL: `POST /v2/translate` with `Authorization: DeepL-Auth-Key …` and
 * `{text: [...], target_lang, source_lang?}` → `{translations: [{detected_source_language, text}]}`.
 * 403 (bad key) and 456 (quota used up) are permanent; 429 and 5xx are retried.
 */
export class DeepLEngine extends TranslationEngine {
  readonly name = 'DeepL';
  readonly limits: EngineLimits;
  private readonly endpoint: string;

  constructor(private readonly options: DeepLOptions) {
    super();
    const base = options.url ?? (options.authKey?.endsWith(':fx') ? DEEPL_FREE_URL : DEEPL_PRO_URL);
    this.endpoint = `${base.replace(/\/+$/, '')}/v2/translate`;
    // DeepL takes 50 texts and 128 KiB per request; 4 bytes per character at worst.
    this.limits = { maxSegmentChars: 5000, maxRequestChars: 30000, maxBatchSize: 50, ...options.limits };
  }

  async translate(texts: string[], languages: LanguagePair): Promise<string[]> {
    if (!this.options.authKey) {
      throw new TranslationEngineError('DeepL needs an authentication key: set TRANSLATION_ENGINE_KEY.', true);
    }
    const body = {
      text: texts,
      target_lang: deeplTargetCode(languages.target),
      ...(languages.source ? { source_lang: deeplSourceCode(languages.source) } : {}),
    };
    const answer = await callEngine<{ translations?: Array<{ text?: unknown }> }>({
      engine: this.name,
      method: 'POST',
      url: this.endpoint,
      headers: { authorization: `DeepL-Auth-Key ${this.options.authKey}` },
      body: JSON.stringify(body),
      timeoutMs: this.options.timeoutMs ?? 60_000,
    });
    if (!Array.isArray(answer.translations)) throw new TranslationEngineError(`${this.name} answered without translations.`, false);
    return expectTranslations(
      this.name,
      texts.length,
      answer.translations.map((t) => t?.text),
    );
  }
}
