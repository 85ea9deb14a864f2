/**
 * The languages documents can be translated from and to: BCP 47 tags, matched in canonical
 * form (`EN-gb` is `en-GB`). A base language, or one of the listed regional or script variants.
 * Whether the configured engine has a given pair is the engine's to say (the document then
 * ends `failed` with the engine's reason).
 */
export interface LanguageInfo {
  name: string;
  /** ISO 639-3, as Apertium names its language pairs. */
  iso3: string;
}

export const LANGUAGES: Readonly<Record<string, LanguageInfo>> = {
  ar: { name: 'Arabic', iso3: 'ara' },
  bg: { name: 'Bulgarian', iso3: 'bul' },
  ca: { name: 'Catalan', iso3: 'cat' },
  cs: { name: 'Czech', iso3: 'ces' },
  cy: { name: 'Welsh', iso3: 'cym' },
  da: { name: 'Danish', iso3: 'dan' },
  de: { name: 'German', iso3: 'deu' },
  el: { name: 'Greek', iso3: 'ell' },
  en: { name: 'English', iso3: 'eng' },
  es: { name: 'Spanish', iso3: 'spa' },
  et: { name: 'Estonian', iso3: 'est' },
  eu: { name: 'Basque', iso3: 'eus' },
  fa: { name: 'Persian', iso3: 'fas' },
  fi: { name: 'Finnish', iso3: 'fin' },
  fr: { name: 'French', iso3: 'fra' },
  ga: { name: 'Irish', iso3: 'gle' },
  gl: { name: 'Galician', iso3: 'glg' },
  he: { name: 'Hebrew', iso3: 'heb' },
  hi: { name: 'Hindi', iso3: 'hin' },
  hu: { name: 'Hungarian', iso3: 'hun' },
  id: { name: 'Indonesian', iso3: 'ind' },
  it: { name: 'Italian', iso3: 'ita' },
  ja: { name: 'Japanese', iso3: 'jpn' },
  ko: { name: 'Korean', iso3: 'kor' },
  lt: { name: 'Lithuanian', iso3: 'lit' },
  lv: { name: 'Latvian', iso3: 'lav' },
  nb: { name: 'Norwegian Bokmål', iso3: 'nob' },
  nl: { name: 'Dutch', iso3: 'nld' },
  oc: { name: 'Occitan', iso3: 'oci' },
  pl: { name: 'Polish', iso3: 'pol' },
  pt: { name: 'Portuguese', iso3: 'por' },
  ro: { name: 'Romanian', iso3: 'ron' },
  ru: { name: 'Russian', iso3: 'rus' },
  sk: { name: 'Slovak', iso3: 'slk' },
  sl: { name: 'Slovenian', iso3: 'slv' },
  sv: { name: 'Swedish', iso3: 'swe' },
  tr: { name: 'Turkish', iso3: 'tur' },
  uk: { name: 'Ukrainian', iso3: 'ukr' },
  zh: { name: 'Chinese', iso3: 'zho' },
};

/** Regional and script variants some engines distinguish (DeepL's EN-GB/EN-US, PT-BR/PT-PT, ZH-HANS/ZH-HANT). */
export const LANGUAGE_VARIANTS: readonly string[] = ['en-GB', 'en-US', 'pt-BR', 'pt-PT', 'zh-Hans', 'zh-Hant'];

export const SUPPORTED_LANGUAGE_TAGS: readonly string[] = [...Object.keys(LANGUAGES), ...LANGUAGE_VARIANTS].sort();

export type LanguageCheck = { ok: true; tag: string } | { ok: false; problem: string };

/** Checks a tag is well-formed BCP 47 and supported; answers its canonical form. */
export function checkLanguage(value: unknown): LanguageCheck {
  if (typeof value !== 'string' || value.trim() === '') return { ok: false, problem: 'must be a BCP 47 language tag such as "en" or "pt-BR"' };
  let tag: string;
  try {
    [tag] = Intl.getCanonicalLocales(value.trim());
  } catch {
    return { ok: false, problem: `"${value}" is not a well-formed BCP 47 language tag` };
  }
  if (LANGUAGES[tag] || LANGUAGE_VARIANTS.includes(tag)) return { ok: true, tag };
  return { ok: false, problem: `"${tag}" is not a supported language (supported: ${SUPPORTED_LANGUAGE_TAGS.join(', ')})` };
}

/** The base language of a supported tag (`pt-BR` → `pt`). */
export const baseLanguage = (tag: string): string => tag.split('-')[0];
