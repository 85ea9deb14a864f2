import { AppConfig } from '@kernel/config';
import { ApertiumEngine } from './apertium.engine';
import { DeepLEngine } from './deepl.engine';
import { LibreTranslateEngine } from './libretranslate.engine';
import { NoTranslationEngine } from './no-engine';
import { TranslationEngine } from './translation-engine';

/** The default LibreTranslate address: the optional service in docker/docker-compose.yml. */
export const DEFAULT_LIBRETRANSLATE_URL = 'http://127.0.0.1:5000';

/** The adapter TRANSLATION_ENGINE names, set up from TRANSLATION_ENGINE_URL and TRANSLATION_ENGINE_KEY. */
export function createTranslationEngine(config: AppConfig): TranslationEngine {
  switch (config.translationEngine) {
    case 'libretranslate':
      return new LibreTranslateEngine({ url: config.translationEngineUrl ?? DEFAULT_LIBRETRANSLATE_URL, apiKey: config.translationEngineKey });
    case 'deepl':
      return new DeepLEngine({ authKey: config.translationEngineKey, url: config.translationEngineUrl });
    case 'apertium':
      return new ApertiumEngine({ url: config.translationEngineUrl });
    case 'none':
    default:
      return new NoTranslationEngine();
  }
}
